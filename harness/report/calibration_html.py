"""calibration.html: the catch matrix as one static page (rows: regressions, columns: layers,
then the kinds of evidence that caught each one: hand-written, baseline, judges, defaults)."""

from __future__ import annotations

from html import escape

from harness import layer as layer_registry

CSS = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#1d2330}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccd;padding:.35rem .6rem;vertical-align:top;font-size:.9rem}
th{background:#eef1f6}.caught{background:#e3f6e6}.missed{background:#fde2e2;font-weight:bold}
.ids{font-family:monospace;font-size:.8rem}.ev{font-size:.8rem;color:#444}
"""


EARLY = ("<p>Each regression's run stopped at its first hard failure: the cases shown are those seen failing "
         "before the stop, not every case that would catch it (<code>harness calibrate --full</code> for the "
         "whole matrix).</p>\n")


def render_calibration_html(data: dict) -> str:
    rows = []
    for r in data["regressions"]:
        cells = []
        for layer in layer_registry.names():
            ids = r["by_layer"].get(layer, [])
            cells.append(f'<td class="{"caught" if ids else ""}"><span class="ids">'
                         + "<br>".join(escape(i) for i in ids[:6])
                         + (f"<br>… {len(ids) - 6} more" if len(ids) > 6 else "") + "</span></td>")
        fe = r.get("first_evidence")
        why = (f'<div class="ev"><b>{escape(fe["case"])}</b> {escape(fe["check"])} [{escape(fe.get("kind", "?"))}]'
               f' (turn {escape(str(fe["turn"]))}): {escape(fe["reason"])}<br>expected: '
               f'{escape(str(fe["expected"])[:200])}<br>observed: {escape(str(fe["observed"])[:200])}</div>'
               ) if fe else '<div class="ev">not caught</div>'
        by_kind = r.get("caught_by_kind") or {}
        kinds = "<br>".join(f'{escape(kind)}: {len(ids)} <span class="ids">({escape(", ".join(ids[:3]))}'
                            f'{", …" if len(ids) > 3 else ""})</span>' for kind, ids in by_kind.items() if ids)
        cls = "" if r["caught_by"] else ' class="missed"'
        rows.append(f"<tr{cls}><td><b>{escape(r['name'])}</b><br><small>{escape(r['layer'])}: "
                    f"{escape(r['description'])}</small></td>{''.join(cells)}"
                    f'<td class="{"caught" if kinds else ""}">{kinds or "-"}</td><td>{why}</td></tr>')
    c, n = data["clean"], data["noise"]
    head = "".join(f"<th>{escape(layer)}</th>" for layer in layer_registry.names())
    caught = sum(1 for r in data["regressions"] if r["caught_by"])
    totals = ", ".join(f"{escape(kind)} {n}" for kind, n in (data.get("by_kind") or {}).items() if n)
    return f"""<!doctype html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>harness calibration</title><style>{CSS}</style></head><body>
<h1>Calibration: caught {caught} of {len(data['regressions'])} seeded regressions</h1>
<p>Clean agent: {c['runs']} run(s), <b>{c['hard_failures']}</b> hard failures, {c['soft']} soft.
Under noise: {n['runs']} run(s), <b>{n['hard_failures']}</b> hard failures, {n['soft']} soft.
Wall time {escape(str(data['wall_seconds']))} s.</p>
{EARLY if data.get("early_stop") else ""}<p>Regressions caught, by kind of evidence: {totals or "none"}.</p>
<table><tr><th>regression</th>{head}<th>caught by (kind of evidence)</th><th>first evidence that caught it</th></tr>{''.join(rows)}</table>
</body></html>"""
