import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from lib import *
import xml.etree.ElementTree as ET
XSS = [r'</script><script>document.title=\"pwned\"</script>', r'<img src=x onerror=\"document.title=1\">',
       r'javascript:alert(1)', r'\u2028\u2029 line seps', r'a\0b NUL', r'\x1b]0;title\x07 \x1b[2J', r'\u202e RTL override',
       r'<svg onload=alert(1)>', r'{{{{7*7}}}} <%= 7*7 %>', r'\"><a href=\"javascript:alert(1)\">x</a>']
cases = "layer: robustness\ncases:\n" + "".join(
    f'  - id: x{i}\n    description: "{t}"\n    tags: ["{t}"]\n    send: "{t}"\n    expect: {{reply: {{contains: "nope {t}"}}}}\n'
    for i, t in enumerate(XSS))
cases += '  - id: huge\n    send: "{words:100000}"\n    expect: {reply: {contains: "zzz"}}\n'
d = project("html", cases=cases)
cfg = d / "harness.toml"
cfg.write_text(cfg.read_text().replace('name = "echo"', 'name = "<b>echo</b><script>document.title=2</script>"'))
c = cli(["run", "--config", cfg, "--quiet", "--run-id", "h1"], d)
judge("html:run-hostile-replies", "replies, descriptions, tags, target name with script tags, NUL, bidi, control sequences", "exit 1, no crash", c[0], c[1], c[2], (1,))
run = d / "reports/h1"
html = (run / "report.html").read_text()
why = []
if "<script>document.title" in html: why.append("raw script in html")
if "onerror=" in html.replace("onerror=&quot;", ""): 
    import re
    if re.search(r"<img[^>]*onerror", html): why.append("raw img onerror")
p = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={d/'prof'}", "--dump-dom", run.joinpath("report.html").as_uri()], capture_output=True, text=True, timeout=120)
dom = p.stdout
import re
title = re.search(r"<title>(.*?)</title>", dom, re.S)
if title and ("pwned" in title.group(1) or title.group(1).strip() in ("1", "2")): why.append("title changed by script: " + title.group(1))
if re.search(r"<img[^>]*onerror", dom): why.append("img element injected")
if re.search(r"<svg[^>]*onload", dom): why.append("svg onload injected")
if re.search(r'<a[^>]*href="javascript', dom): why.append("javascript: link")
if "x9" not in dom or "huge" not in dom: why.append("page cut short (a case missing from the DOM)")
judge("html:report-in-chromium", "report.html of those replies opened in headless Chromium", "no script runs, no element injected, every case shown", 0 if not why else 1, "", "", None, extra_why=why)
for f in ("junit.xml",):
    try:
        ET.parse(run / f); ok = []
    except ET.ParseError as e:
        ok = [f"{f} is not XML: {e}"]
    judge("html:junit-parses", "junit.xml of replies with NUL and control characters", "well-formed XML", 0, "", "", None, extra_why=ok)
md = (run / "summary.md").read_text()
judge("html:summary-md-inert", "summary.md of those replies", "no raw HTML script, no ESC", 0, "", "", None,
      extra_why=(["raw <script> in summary.md"] if "<script>" in md else []) + (["ESC in summary.md"] if "\x1b" in md else []))
for fmt in ("github", "md"):
    c = cli(["report", run, "--format", fmt], d)
    judge(f"html:report-{fmt}", f"harness report --format {fmt} of that run", "exit 0, inert", c[0], c[1], c[2], (0,),
          extra_why=(["ESC on stdout"] if "\x1b" in c[1] else []) + (["raw <script> on stdout"] if "<script>" in c[1] else []))
dump(BASE / "rows5.json")
print(len(html), "bytes html")
