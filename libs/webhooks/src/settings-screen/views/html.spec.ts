import { escapeHtml, html, raw } from './html';

describe('html templates', () => {
  it('escapes every interpolated value', () => {
    const evil = `<script>alert("x")</script>&'`;
    expect(html`<p title="${evil}">${evil}</p>`.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>',
    );
  });

  it('nests templates and raw markup without escaping them twice; joins arrays; drops null, undefined and false', () => {
    const items = ['a<b', 'c'].map((t) => html`<li>${t}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${raw('<hr>')}${0}`.value).toBe(
      '<ul><li>a&lt;b</li><li>c</li></ul><hr>0',
    );
  });

  it('escapeHtml leaves plain text alone', () => {
    expect(escapeHtml('plain text 123')).toBe('plain text 123');
  });
});
