// The operator console's entry: the login prompt (the admin token, kept in this tab's
// sessionStorage, sent as Authorization: Bearer), then the sales list (#/sales) or one sale
// (#/sale/<id>). No framework, no inline script (the page's CSP forbids it). Nothing is fetched
// before a token is given; a refused token brings the prompt back.
import { ACTOR, session, whenUnauthenticated } from './console-api.js';
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

function route() {
  if (!session.token()) return showLogin();
  $('login').hidden = true;
  $('who').hidden = false;
  setText($('who-name'), session.operator() ? ` as ${session.operator()}` : '');
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
  const operator = $('login-operator').value.trim();
  if (token.length < 8) return setText($('login-error'), 'The admin token has at least 8 characters.');
  if (operator && !ACTOR.test(operator))
    return setText($('login-error'), 'Your name: 1-64 characters of letters, digits and _ . @ : + -');
  session.signIn(token, operator);
  $('login-token').value = '';
  route();
});

$('sign-out').addEventListener('click', () => {
  session.signOut();
  showLogin('Signed out.');
});

whenUnauthenticated((message) => showLogin(message));
window.addEventListener('hashchange', route);
route();
