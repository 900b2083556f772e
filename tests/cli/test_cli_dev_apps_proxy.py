"""The sandbox proxy `rondo dev` puts between the page and a view (`SANDBOX_SCRIPT`), run in
Node against a scripted window: it announces itself to the page's origin only, loads the view
once and only from the page, relays the page's messages to the view and the view's to the page
(to the page's origin only), and drops everything else: a message from another origin, from
another frame, or a second view."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from rondo.cli.dev_apps import SANDBOX_SCRIPT
from tests.helpers.components import missing

HARNESS = r"""
const vm = require("node:vm");
const log = [];
const listeners = [];
const parent = { postMessage: (m, origin) => log.push(["to-page", m.method || m.id, origin]) };
const made = [];
const document = {
  documentElement: { dataset: { hostOrigin: "http://127.0.0.1:5555" } },
  createElement: (tag) => {
    const frame = { tag, attrs: {}, setAttribute(k, v) { this.attrs[k] = v; },
                    contentWindow: { postMessage: (m, origin) => log.push(["to-view", m.method || m.id, origin]) } };
    made.push(frame);
    return frame;
  },
  body: { append: (el) => log.push(["appended", el.tag, el.attrs.sandbox, el.srcdoc]) },
};
const window = { parent, addEventListener: (type, fn) => listeners.push(fn) };
vm.runInNewContext(process.argv[2], { window, document });
const send = (source, origin, data) => listeners.forEach((fn) => fn({ source, origin, data }));
const stranger = { postMessage() {} };
const ready = { method: "ui/notifications/sandbox-resource-ready", params: { html: "<p>view</p>" } };
send(parent, "http://127.0.0.1:5555", { jsonrpc: "2.0", id: 1, method: "early" });  // no view yet
send(parent, "https://evil.example", ready);                                        // wrong origin
send(stranger, "http://127.0.0.1:5555", ready);                                     // wrong frame
send(parent, "http://127.0.0.1:5555", ready);                                       // the view
send(parent, "http://127.0.0.1:5555", { ...ready, params: { html: "<p>other</p>" } }); // not twice
const view = made[0].contentWindow;
send(parent, "http://127.0.0.1:5555", { jsonrpc: "2.0", method: "ui/notifications/tool-input" });
send(parent, "https://evil.example", { jsonrpc: "2.0", method: "forged" });
send(view, "null", { jsonrpc: "2.0", id: 0, method: "ui/initialize" });
send(stranger, "null", { jsonrpc: "2.0", id: 9, method: "tools/call" });
console.log(JSON.stringify({ log, frames: made.length }));
"""


def test_the_proxy_relays_between_the_page_and_its_view_and_nothing_else(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        missing("node", "scripts/setup.sh installs Node")
    assert node is not None
    harness = tmp_path / "harness.cjs"
    harness.write_text(HARNESS)
    done = subprocess.run([node, str(harness), SANDBOX_SCRIPT.decode()], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["frames"] == 1
    assert seen["log"] == [
        ["to-page", "ui/notifications/sandbox-proxy-ready", "http://127.0.0.1:5555"],
        ["appended", "iframe", "allow-scripts allow-forms", "<p>view</p>"],
        ["to-view", "ui/notifications/tool-input", "*"],
        ["to-page", "ui/initialize", "http://127.0.0.1:5555"],
    ]
