/** The settings screen's one stylesheet (served at /settings/assets/settings.css; no build step). */
export const SETTINGS_CSS = `
*, *::before, *::after { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; font-size: 100%; line-height: 1.5; color: #1b1f24; background: #f4f6f8; }
body { margin: 0; }
a { color: #0b57d0; }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 3px solid #f5a623; outline-offset: 2px; border-radius: 2px; }
.visually-hidden { position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.skip-link { position: absolute; left: 0.5rem; top: -3rem; background: #fff; padding: 0.5rem 1rem; z-index: 10; }
.skip-link:focus { top: 0.5rem; }

.topbar { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 0.5rem; padding: 0.5rem 1rem; background: #12263f; color: #fff; }
.brand { color: #fff; font-weight: 700; text-decoration: none; font-size: 1.1rem; }
.user-menu { position: relative; }
.user-menu > summary { list-style: none; cursor: pointer; padding: 0.4rem 0.75rem; border: 1px solid #8aa4c8; border-radius: 6px; color: #fff; }
.user-menu > summary::-webkit-details-marker { display: none; }
.user-menu > summary::after { content: " \\25BE"; }
.user-menu[open] > summary { background: #1e3a5f; }
.user-menu ul { position: absolute; right: 0; margin: 0.25rem 0 0; padding: 0.25rem 0; list-style: none; min-width: 12rem; background: #fff; border: 1px solid #c7d0db; border-radius: 6px; box-shadow: 0 4px 16px rgba(0,0,0,.15); z-index: 5; }
.user-menu li > a, .user-menu li button { display: block; width: 100%; padding: 0.5rem 1rem; text-align: left; color: #1b1f24; background: none; border: 0; font: inherit; text-decoration: none; cursor: pointer; }
.user-menu li > a:hover, .user-menu li button:hover { background: #eef2f7; }

main { max-width: 60rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.6rem; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.3rem; margin: 0 0 0.75rem; }
h3 { font-size: 1.1rem; margin: 1.5rem 0 0.5rem; }
.tabs { display: flex; gap: 0.25rem; border-bottom: 2px solid #c7d0db; margin-bottom: 1rem; }
.tabs a { padding: 0.5rem 1rem; text-decoration: none; color: #1b1f24; border: 2px solid transparent; border-bottom: 0; border-radius: 6px 6px 0 0; margin-bottom: -2px; }
.tabs a[aria-current="page"] { border-color: #c7d0db; background: #fff; font-weight: 600; }
.panel { background: #fff; border: 1px solid #d5dce4; border-radius: 8px; padding: 1rem 1.25rem; margin-bottom: 1rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }

.notice { padding: 0.75rem 1rem; border-radius: 6px; margin-bottom: 1rem; border: 1px solid #7fb77e; background: #edf7ed; }
.error-summary { padding: 0.75rem 1rem; border-radius: 6px; margin-bottom: 1rem; border: 2px solid #b3261e; background: #fdecea; }
.error-summary h3 { margin-top: 0; }
.error-summary ul { margin: 0.25rem 0 0; padding-left: 1.25rem; }
.inline-list { margin: 0; padding-left: 1.1rem; }
.field-error { color: #b3261e; font-weight: 600; margin: 0.25rem 0 0; }
.hint { color: #4a5563; font-size: 0.9rem; margin: 0.25rem 0 0; }
.disabled-reason { color: #7a4b00; font-size: 0.9rem; margin: 0.25rem 0 0.5rem; }

.field { margin-bottom: 1rem; }
label, legend { font-weight: 600; }
input[type="url"], input[type="email"], input[type="password"], input[type="text"], input[type="datetime-local"], textarea { display: block; width: 100%; max-width: 36rem; padding: 0.5rem; margin-top: 0.25rem; font: inherit; border: 1px solid #7b8794; border-radius: 4px; }
input[aria-invalid="true"], textarea[aria-invalid="true"] { border: 2px solid #b3261e; }
fieldset { border: 1px solid #d5dce4; border-radius: 6px; margin: 0 0 1rem; padding: 0.5rem 1rem 0.75rem; }
fieldset fieldset { border: 0; padding: 0.25rem 0; margin: 0; }
fieldset fieldset legend { font-weight: 600; color: #4a5563; }
.checkbox-groups { display: grid; grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); gap: 0.5rem 1.5rem; }
.checkbox { display: flex; align-items: center; gap: 0.5rem; padding: 0.15rem 0; font-weight: 400; }
.checkbox input { width: 1.15rem; height: 1.15rem; }

button, .button { display: inline-block; padding: 0.45rem 1rem; font: inherit; font-weight: 600; border-radius: 6px; border: 1px solid #0b57d0; background: #0b57d0; color: #fff; cursor: pointer; text-decoration: none; line-height: 1.4; }
button.secondary, .button.secondary { background: #fff; color: #0b57d0; }
button.danger, .button.danger { background: #b3261e; border-color: #b3261e; color: #fff; }
.actions { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; margin-top: 0.75rem; }
.actions form { margin: 0; }

.switch-row { display: flex; flex-wrap: wrap; align-items: center; gap: 0.75rem; }
.switch-row form { margin: 0; }
button[role="switch"] { min-width: 5rem; border-radius: 999px; background: #fff; color: #1b1f24; border: 2px solid #7b8794; }
button[role="switch"][aria-checked="true"] { background: #1d7a33; border-color: #1d7a33; color: #fff; }

ul.endpoints { list-style: none; padding: 0; margin: 0; }
ul.endpoints > li { border: 1px solid #d5dce4; border-radius: 8px; padding: 0.75rem 1rem; margin-bottom: 0.75rem; background: #fbfcfd; }
.endpoint-head { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: baseline; justify-content: space-between; }
.endpoint-url { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 1rem; margin: 0; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0.1rem 0.6rem; border-radius: 999px; font-size: 0.85rem; font-weight: 600; border: 1px solid; }
.badge.enabled, .badge.delivered { color: #1d5e2c; background: #e6f4ea; border-color: #1d7a33; }
.badge.disabled, .badge.cancelled { color: #4a5563; background: #eef1f4; border-color: #7b8794; }
.badge.pending { color: #7a4b00; background: #fff4e0; border-color: #b36b00; }
.badge.failed { color: #8c1d18; background: #fdecea; border-color: #b3261e; }
.warning { color: #8c1d18; }
.secret { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f1f3f5; border: 1px dashed #7b8794; padding: 0.5rem; overflow-wrap: anywhere; display: block; }

.table-scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 0.5rem; border-bottom: 1px solid #d5dce4; vertical-align: top; }
th { background: #f1f3f5; }
td form { margin: 0; }
.sign-in { max-width: 26rem; margin: 3rem auto; }

@media (max-width: 40rem) {
  main { padding: 0.5rem; }
  .panel { padding: 0.75rem; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dd { margin-bottom: 0.5rem; }
  table, thead, tbody, tr, th, td { display: block; }
  thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  tr { border: 1px solid #d5dce4; border-radius: 6px; margin-bottom: 0.5rem; padding: 0.25rem; }
  td { border: 0; padding: 0.25rem 0.5rem; }
  td::before { content: attr(data-label) ": "; font-weight: 600; }
  .user-menu ul { right: -0.5rem; }
}
`;
