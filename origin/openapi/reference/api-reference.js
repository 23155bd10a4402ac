// Starts Swagger UI on the origin's document (GET /admin/openapi.json). The document needs the admin
// token: the one the console keeps in this tab's sessionStorage (origin/console/console-api.js). It
// goes on the document's request and, pre-filled as the admin bearer token, on "Try it out" calls.
// No validator badge (it would call a third party) and no other outside requests.
/* global SwaggerUIBundle */
'use strict';

const TOKEN_KEY = 'consoleToken';
const DOCUMENT_URL = '/admin/openapi.json';

const token = sessionStorage.getItem(TOKEN_KEY) || '';
if (!token) document.getElementById('api-reference-note').hidden = false;

const ui = SwaggerUIBundle({
  url: DOCUMENT_URL,
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  requestInterceptor(request) {
    if (token && new URL(request.url, location.href).pathname === DOCUMENT_URL) {
      request.headers.Authorization = `Bearer ${token}`;
    }
    return request;
  },
  onComplete() {
    if (token) ui.preauthorizeApiKey('adminToken', token);
  },
});
