// @ts-check
// The operator console's entry: the login prompt (the admin token, kept in this tab's
// sessionStorage, sent as Authorization: Bearer), then the origin says whose token it is (the
// operator every change is recorded as), then the sales list (#/sales) or one sale (#/sale/<id>).
// No framework, no inline script (the page's CSP forbids it). Nothing is fetched before a token is
// given; a refused token brings the prompt back.
import { ApiError, session, whenUnauthenticated, whoAmI } from './console-api.js';
import { $, setText } from './console-dom.js';
import { hideSale, showSale } from './console-sale.js';
import { hideSales, showSales } from './console-sales.js';

const ID = /^[1-9][0-9]{0,19}$/;

function showLogin(message = '') {
  hideSales();
  hideSale();
  $('who').hidden = true;
  $('login').hidden = false;
  setText($('login-error'), message);
  $('login-token').focus();
}

async function route() {
  if (!session.token()) return showLogin();
  try {
    await whoAmI();
  } catch (err) {
    // A refused token has already brought the prompt back with the origin's message (api()).
    if (err instanceof ApiError && err.status === 401) return;
    session.signOut();
    return showLogin(`The origin could not say whose token this is: ${/** @type {Error} */ (err).message}`);
  }
  if (!session.token()) return; // signed out while asking
  $('login').hidden = true;
  $('who').hidden = false;
  setText($('who-name'), session.operator());
  const sale = /^#\/sale\/(.+)$/.exec(location.hash);
  if (sale && ID.test(sale[1])) {
    hideSales();
    showSale(sale[1]);
  } else {
    hideSale();
    showSales();
  }
  $('main').focus();
}

$('login-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const token = $('login-token').value.trim();
  if (token.length < 8) return setText($('login-error'), 'The admin token has at least 8 characters.');
  session.signIn(token);
  $('login-token').value = '';
  // route() answers its own errors (back to the login prompt with the reason).
  void route();
});

$('sign-out').addEventListener('click', () => {
  session.signOut();
  showLogin('Signed out.');
});

whenUnauthenticated((message) => showLogin(message));
window.addEventListener('hashchange', () => void route());
void route();
