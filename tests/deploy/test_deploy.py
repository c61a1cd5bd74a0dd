#!/usr/bin/python3
"""test_deploy.py - deploy/ checked as far as this machine can (no image
pulls, no Kubernetes): every manifest parses and holds what Kubernetes
requires of its kind (the fields kubeconform's schemas require, checked by
hand: kubeconform is in neither Debian nor npm), the StatefulSets ask for a
GPU and have both probes, selectors match their pods, each names a Service
and a ConfigMap that exist; each conf (deploy/cudis.conf and the
ConfigMaps') starts the built server and CONFIG GET gives its values back;
the Dockerfile's ENTRYPOINT options are options the server knows and its
build step is the README's install commands, verbatim; compose.yaml's
paths exist.
  /usr/bin/python3 test_deploy.py --server PATH
"""
import glob
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from e2e_server import free_port  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEPLOY = os.path.join(ROOT, "deploy")
SERVER = None

REQUIRED = {  # kind -> dotted paths every object of the kind must have
    "ConfigMap": ["data"],
    "Service": ["spec.ports", "spec.selector"],
    "StatefulSet": ["spec.serviceName", "spec.selector.matchLabels", "spec.template.metadata.labels",
                    "spec.template.spec.containers"],
    "PodDisruptionBudget": ["spec.selector.matchLabels"],
    "Job": ["spec.template.spec.containers", "spec.template.spec.restartPolicy"],
}
API = {"ConfigMap": "v1", "Service": "v1", "StatefulSet": "apps/v1",
       "PodDisruptionBudget": "policy/v1", "Job": "batch/v1"}


def get(obj, path):
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def manifests():
    out = []
    for path in sorted(glob.glob(os.path.join(DEPLOY, "k8s", "**", "*.yaml"), recursive=True)):
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if doc is not None:
                    out.append((os.path.relpath(path, ROOT), doc))
    return out


def ask(port, *args):
    """One command over RESP; the reply's bulk strings (an array flattened)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(("*%d\r\n" % len(args) + "".join("$%d\r\n%s\r\n" % (len(a), a) for a in args)).encode())
    buf = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        buf += d
        if buf.startswith((b"+", b"-", b":")) and buf.endswith(b"\r\n"):
            break
        if buf.startswith(b"*") and buf.count(b"\r\n") >= 1 + 2 * int(buf[1:buf.index(b"\r\n")]):
            break
    s.close()
    if buf.startswith(b"+") or buf.startswith(b"-"):
        return [buf[1:-2].decode()]
    lines = buf.split(b"\r\n")
    return [lines[i].decode() for i in range(2, len(lines), 2)]


class Deploy(unittest.TestCase):
    def test_manifests_hold_what_their_kind_requires(self):
        docs = manifests()
        self.assertGreater(len(docs), 8)
        for path, d in docs:
            kind = d.get("kind")
            self.assertIn(kind, REQUIRED, path)
            self.assertEqual(d.get("apiVersion"), API[kind], path)
            name = get(d, "metadata.name")
            self.assertTrue(name and re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name), path)
            for req in REQUIRED[kind]:
                self.assertIsNotNone(get(d, req), "%s: %s has no %s" % (path, kind, req))

    def test_statefulsets_gpus_probes_and_references(self):
        docs = manifests()
        by = {}
        for path, d in docs:
            by.setdefault(d["kind"], {})[d["metadata"]["name"]] = d
        self.assertEqual(sorted(by["StatefulSet"]), ["cudis", "cudis-cluster"])
        for name, ss in by["StatefulSet"].items():
            svc = by["Service"][ss["spec"]["serviceName"]]
            self.assertEqual(svc["spec"].get("clusterIP"), "None", name)  # headless
            labels = ss["spec"]["template"]["metadata"]["labels"]
            for k, v in ss["spec"]["selector"]["matchLabels"].items():
                self.assertEqual(labels.get(k), v, name)
            for k, v in svc["spec"]["selector"].items():
                self.assertEqual(labels.get(k), v, name)
            self.assertTrue(any(all(labels.get(k) == v for k, v in
                                    pdb["spec"]["selector"]["matchLabels"].items())
                                for pdb in by["PodDisruptionBudget"].values()), name)
            c = ss["spec"]["template"]["spec"]["containers"][0]
            self.assertEqual(int(c["resources"]["limits"]["nvidia.com/gpu"]), 1, name)
            self.assertIn("readinessProbe", c, name)
            self.assertIn("livenessProbe", c, name)
            ports = {p["name"] for p in c["ports"]}
            for p in svc["spec"]["ports"]:
                self.assertIn(p["targetPort"], ports, name)
            vols = {v["name"]: v for v in ss["spec"]["template"]["spec"]["volumes"]}
            self.assertIn(vols["conf"]["configMap"]["name"], by["ConfigMap"], name)
            mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
            self.assertEqual(mounts["/etc/cudis"], "conf")
            self.assertEqual(mounts["/data"], "data")
            self.assertIn("data", [t["metadata"]["name"] for t in ss["spec"]["volumeClaimTemplates"]])
        job = by["Job"]["cudis-cluster-create"]
        script = job["spec"]["template"]["spec"]["containers"][0]["command"][-1]
        self.assertIn("redis-cli --cluster create", script)
        replicas = by["StatefulSet"]["cudis-cluster"]["spec"]["replicas"]
        self.assertIn("for i in %s;" % " ".join(str(i) for i in range(replicas)), script)

    def run_conf(self, text, extra=()):
        """Start the server on the conf text (plus extra options, then a
        port and scratch dirs); CONFIG GET of each of its directives."""
        tmp = tempfile.mkdtemp(prefix="cudis-deploy-")
        conf = os.path.join(tmp, "cudis.conf")
        with open(conf, "w") as f:
            f.write(text)
        port = free_port()
        while port > 55535:  # a cluster node's bus port is its port + 10000
            port = free_port()
        args = [SERVER, conf] + list(extra) + ["--port", str(port), "--bind", "127.0.0.1",
                                                "--dir", tmp, "--engine", "cpu",
                                                "--maxmemory", "64mb", "--logfile", ""]
        if "cluster-enabled yes" in text:
            args += ["--cluster-config-file", os.path.join(tmp, "nodes.conf")]
        with open(os.path.join(tmp, "log"), "wb") as log:
            p = subprocess.Popen(args, stdout=log, stderr=log)
        try:
            end = time.time() + 20
            while time.time() < end:
                if p.poll() is not None:
                    with open(os.path.join(tmp, "log")) as f:
                        self.fail("the server did not start on:\n%s\n%s" % (text, f.read()))
                try:
                    if ask(port, "PING") == ["PONG"]:
                        break
                except OSError:
                    time.sleep(0.05)
            for line in text.splitlines():
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                name, value = line.split(None, 1)
                if name in ("maxmemory", "cluster-config-file"):
                    continue  # overridden here
                got = ask(port, "CONFIG", "GET", name)
                self.assertEqual(got[0], name, line)
                want = str(8 * 1024 ** 3) if value == "8gb" else value
                self.assertEqual(got[1], want, line)
        finally:
            p.terminate()
            p.wait(10)
            subprocess.run(["rm", "-rf", tmp])

    def test_confs_start_the_server(self):
        with open(os.path.join(DEPLOY, "cudis.conf")) as f:
            self.run_conf(f.read())
        for path, d in manifests():
            if d["kind"] == "ConfigMap":
                self.run_conf(d["data"]["cudis.conf"])

    def test_dockerfile_entrypoint_and_build_step(self):
        with open(os.path.join(DEPLOY, "Dockerfile")) as f:
            text = f.read()
        m = re.search(r"^ENTRYPOINT (\[.*?\])$", text.replace("\\\n", ""), re.M | re.S)
        entry = json.loads(m.group(1))
        self.assertEqual(entry[:2], ["cudis-server", "/etc/cudis/cudis.conf"])
        help_text = subprocess.run([SERVER, "--help"], capture_output=True, text=True).stdout
        known = set(re.findall(r"^  --([a-z0-9-]+)", help_text, re.M))
        opts = entry[2:]
        for i in range(0, len(opts), 2):
            self.assertTrue(opts[i].startswith("--") and opts[i][2:] in known, opts[i])
        self.assertIn("HEALTHCHECK", text)
        self.assertRegex(text, r"(?m)^USER 999:999$")
        build = re.search(r"(?m)^RUN (scripts/deps\.sh.*)$", text).group(1)
        with open(os.path.join(ROOT, "README.md")) as f:
            readme = f.read()
        block = re.search(r"## Install\n.*?```sh\n(.*?)```", readme, re.S).group(1)
        cmds = [l.split("#")[0].strip() for l in block.splitlines() if l.strip() and not l.startswith("#")]
        self.assertEqual(" && ".join(cmds[:3]), build)

    def test_compose_paths(self):
        with open(os.path.join(DEPLOY, "compose.yaml")) as f:
            c = yaml.safe_load(f)
        svc = c["services"]["cudis"]
        self.assertTrue(os.path.exists(os.path.join(DEPLOY, svc["build"]["context"],
                                                    svc["build"]["dockerfile"])))
        for v in svc["volumes"]:
            src = v.split(":")[0]
            if src.startswith("."):
                self.assertTrue(os.path.exists(os.path.join(DEPLOY, src)), src)
        self.assertEqual(svc["deploy"]["resources"]["reservations"]["devices"][0]["driver"], "nvidia")


if __name__ == "__main__":
    if "--server" in sys.argv:
        i = sys.argv.index("--server")
        SERVER = sys.argv[i + 1]
        del sys.argv[i:i + 2]
    if not SERVER or not os.access(SERVER, os.X_OK):
        print("usage: test_deploy.py --server PATH (the built cudis-server)")
        sys.exit(2)
    unittest.main(verbosity=2)
