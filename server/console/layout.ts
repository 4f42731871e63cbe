// The page around every console screen: a skip link, the navigation, who is signed in and the sign-out form, and
// one small stylesheet (no script at all: every action is a form, so the console works on a slow connection and
// under a policy that allows no script).
import { html, type Html } from './html.js';
import type { ConsoleSession } from './sessions.js';
import { manages } from './access.js';

export const CONSOLE_PATH = '/console';

export const STYLESHEET = `
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1b1b1b;background:#fafafa}
a{color:#0b4f9c}
a:focus,button:focus,input:focus,select:focus{outline:3px solid #f0a000;outline-offset:1px}
.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.skip{position:absolute;left:-9999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px}
header{background:#12355b;color:#fff;padding:8px 16px;display:flex;flex-wrap:wrap;gap:12px;align-items:center}
header a{color:#fff}
header nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:14px}
header .who{margin-left:auto;display:flex;gap:8px;align-items:center}
header button{background:#fff;color:#12355b;border:0;padding:4px 10px;border-radius:3px;cursor:pointer}
main{padding:12px 16px;max-width:1200px}
h1{font-size:1.4em;margin:.4em 0}h2{font-size:1.15em;margin:1em 0 .4em}
table{border-collapse:collapse;width:100%;background:#fff;margin:.5em 0}
th,td{border:1px solid #c8c8c8;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#eef1f5}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
form.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-end;background:#fff;padding:8px;border:1px solid #c8c8c8}
form.filters .field{display:flex;flex-direction:column;font-size:.9em}
input,select{font:inherit;padding:3px 4px;border:1px solid #767676;border-radius:2px}
button{font:inherit;padding:4px 10px;border:1px solid #12355b;background:#12355b;color:#fff;border-radius:3px;cursor:pointer}
button.secondary{background:#fff;color:#12355b}
form.inline{display:inline}
pre{background:#fff;border:1px solid #c8c8c8;padding:8px;overflow:auto;max-height:28em;font-size:13px}
.notice{background:#e7f4e4;border:1px solid #3b7a2a;padding:6px 10px}
.error{background:#fdecea;border:1px solid #a4262c;padding:6px 10px}
.secret{font-family:monospace;font-size:1.05em;background:#fff8d6;border:1px solid #8a6d00;padding:6px;word-break:break-all}
.state-rejected{color:#a4262c;font-weight:600}.state-posted{color:#2d6a1f}.state-received{color:#6b4e00}
.muted{color:#555}
.nowrap{white-space:nowrap}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px}dl.facts dt{font-weight:600}dl.facts dd{margin:0}
`;

export interface PageOptions {
  title: string;
  session?: ConsoleSession | null;
  /** Unread notifications of the member, shown beside the link. */
  unread?: number;
  body: Html;
}

export function page(options: PageOptions): Html {
  const session = options.session;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Console</title>
<link rel="stylesheet" href="${CONSOLE_PATH}/style.css">
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
<header>
<strong>${session ? session.organizationName : 'Distributor ERP'} · Console</strong>
${
  session
    ? html`<nav aria-label="Console">
<ul>
<li><a href="${CONSOLE_PATH}/dms">DMS documents</a></li>
<li><a href="${CONSOLE_PATH}/reconciliation">Reconciliation</a></li>
<li><a href="${CONSOLE_PATH}/trips">Trips</a></li>
<li><a href="${CONSOLE_PATH}/notifications">Notifications${options.unread ? html` (${options.unread} unread)` : ''}</a></li>
${
  manages(session)
    ? html`<li><a href="${CONSOLE_PATH}/postings">Postings</a></li>
<li><a href="${CONSOLE_PATH}/keys">API keys</a></li>
<li><a href="${CONSOLE_PATH}/webhooks">Webhooks</a></li>
<li><a href="${CONSOLE_PATH}/members">Members</a></li>
<li><a href="${CONSOLE_PATH}/log">API log</a></li>`
    : ''
}
</ul>
</nav>
<div class="who"><span>${session.memberName} (${session.role})</span>
<form class="inline" method="post" action="${CONSOLE_PATH}/sign-out"><input type="hidden" name="_csrf" value="${session.csrfToken}"><button type="submit">Sign out</button></form></div>`
    : ''
}
</header>
<main id="main">
<h1>${options.title}</h1>
${options.body}
</main>
</body>
</html>`;
}

/** A date-time as the accountant reads it: `2026-11-25 14:03 UTC` (the zone said, never guessed). */
export function when(value: Date | string | null | undefined): string {
  if (!value) return '';
  const date = typeof value === 'string' ? new Date(value) : value;
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
