# file: docs/snippets/apps_bundle.py
import tempfile
from pathlib import Path

import rondo
from rondo.apps import Apps, AppsError

# What `npm run build` leaves in web/dist with vite-plugin-singlefile: one index.html, its
# script and styles inlined. (Made by hand here, so this page needs no Node.)
web = Path(tempfile.mkdtemp()) / "web"
(web / "dist").mkdir(parents=True)
(web / "dist" / "index.html").write_text(
    "<!doctype html><html><head><style>body{margin:0}</style></head>"
    "<body><div id='app'></div><script type='module'>/* the bundled app */</script></body></html>")

server = rondo.Server("docs-apps-bundle")
apps = server.extension(Apps())
chart = apps.view("ui://sales/chart", bundle=web / "dist", prefers_border=False)
assert chart.html.startswith("<!doctype html>")

# A build without the plugin points at files beside it, which a sandboxed view cannot fetch.
(web / "plain").mkdir()
(web / "plain" / "index.html").write_text(
    "<!doctype html><html><head><script type='module' src='/assets/index-4f2a.js'></script>"
    "</head><body></body></html>")
try:
    apps.view("ui://sales/plain", bundle=web / "plain")
except AppsError as exc:
    assert "relative path" in str(exc) and "vite-plugin-singlefile" in str(exc)
    print("refused:", exc)
