#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks deploy/kubernetes/rld-daemonset.yaml (or rld-cleanup.yaml, below).

1. Schema: every object is checked against the Kubernetes API types as python3-kubernetes
   (Debian) generates them from the API's OpenAPI description: every field must exist in its
   type (a misspelt or misplaced key fails), have the type's type, and required fields must be
   present. No cluster is needed. python3-kubernetes 22 describes Kubernetes 1.22.
2. What rld needs, field by field: hostNetwork, the node's /sys/fs/bpf, the capabilities of
   packaging/rld.service and no more, the metrics port in the configuration, the probes
   (start-up and liveness on /healthz, readiness on /readyz), configuration and policies from ConfigMaps,
   each policy valid (rlctl policy validate), and netfilter_sysctl_dir a read-write mount of
   the node's /proc/sys/net/netfilter (syn_cookies rules; the container's /proc/sys is
   read-only).
3. What docs/operations.md asks of an endpoint others can reach: the metrics endpoint on the
   node's address (not every address of the node), its threads not real-time
   (metrics_realtime_priority 0).

With --cleanup, deploy/kubernetes/rld-cleanup.yaml instead: the same schema check, and that it
runs rld --cleanup as the tests do, on every node, in the node's network namespace and bpffs,
with the node's netfilter sysctls where its arguments say.

usage: check_manifest.py MANIFEST UNIT_FILE RLCTL CONTAINERFILE
       check_manifest.py --cleanup MANIFEST UNIT_FILE CONTAINERFILE
"""
import os
import re
import subprocess
import sys
import tempfile

import yaml
from kubernetes import client

errors = []


def error(msg):
    errors.append(msg)


def model_for(api_version, kind):
    group_version = api_version.split("/")[-1]  # apps/v1 -> v1
    name = group_version[0].upper() + group_version[1:] + kind
    cls = getattr(client.models, name, None)
    if cls is None:
        error(f"no API type for {api_version} {kind}")
    return cls


def check(value, type_name, where):
    """Builds the client object for `value` as `type_name`, reporting what does not fit."""
    if value is None:
        return None
    m = re.fullmatch(r"list\[(.+)\]", type_name)
    if m:
        if not isinstance(value, list):
            error(f"{where}: expected a list, got {type(value).__name__}")
            return None
        return [check(v, m.group(1), f"{where}[{i}]") for i, v in enumerate(value)]
    m = re.fullmatch(r"dict\(str, (.+)\)", type_name)
    if m:
        if not isinstance(value, dict):
            error(f"{where}: expected a map, got {type(value).__name__}")
            return None
        return {k: check(v, m.group(1), f"{where}.{k}") for k, v in value.items()}
    simple = {"str": str, "int": int, "bool": bool, "float": (int, float)}
    if type_name in simple:
        ok = isinstance(value, simple[type_name]) and not (
            type_name != "bool" and isinstance(value, bool))
        if not ok:
            error(f"{where}: expected {type_name}, got {value!r}")
        return value
    if type_name == "object":  # IntOrString and free-form fields
        return value
    cls = getattr(client.models, type_name, None)
    if cls is None:
        error(f"{where}: unknown type {type_name}")
        return None
    if not isinstance(value, dict):
        error(f"{where}: expected a {type_name} object, got {value!r}")
        return None
    by_json = {j: p for p, j in cls.attribute_map.items()}
    kwargs = {}
    for key, v in value.items():
        if key not in by_json:
            error(f"{where}: {type_name} has no field '{key}'")
            continue
        attr = by_json[key]
        kwargs[attr] = check(v, cls.openapi_types[attr], f"{where}.{key}")
    try:
        # The generated setters refuse a missing required field and values outside an enum.
        return cls(**kwargs)
    except (ValueError, TypeError) as e:
        error(f"{where}: {e}")
        return None


def unit_capabilities(unit_path):
    for line in open(unit_path):
        if line.startswith("CapabilityBoundingSet="):
            return {c.removeprefix("CAP_") for c in line.split("=", 1)[1].split()}
    error(f"{unit_path}: no CapabilityBoundingSet=")
    return set()


def load_objects(manifest):
    """Every object of the manifest, checked against its API type, by (kind, name)."""
    docs = [d for d in yaml.safe_load_all(open(manifest)) if d]
    objects = {}
    for i, d in enumerate(docs):
        where = f"document {i + 1} ({d.get('kind')} {d.get('metadata', {}).get('name')})"
        cls = model_for(d.get("apiVersion", ""), d.get("kind", ""))
        if cls:
            check(d, cls.__name__, where)
        objects[(d.get("kind"), d.get("metadata", {}).get("name"))] = d
    return objects


# The node's directory of nf_conntrack_tcp_loose, which syn_cookies rules set. A container that
# is not privileged gets /proc/sys read-only, so the pods mount the node's directory read-write
# at another path and name it in netfilter_sysctl_dir.
NODE_SYSCTL_DIR = "/proc/sys/net/netfilter"
POD_SYSCTL_DIR = "/host/proc/sys/net/netfilter"

# What the cleanup DaemonSet runs: the arguments tests/integration/cleanup_test.cc runs rld with
# (TheCleanupManifestsCommandAfterAKilledPod), on the default pin root.
CLEANUP_ARGS = ["--cleanup", "--pin-root", "/sys/fs/bpf/rl",
                "--netfilter-sysctl-dir", POD_SYSCTL_DIR]


def check_sysctl_dir(pod, container, sysctl_dir):
    """netfilter_sysctl_dir must be the node's /proc/sys/net/netfilter, mounted read-write."""
    if sysctl_dir == "/proc" or sysctl_dir.startswith("/proc/"):
        error(f"netfilter_sysctl_dir {sysctl_dir}: /proc/sys is read-only in the container; mount "
              f"the node's {NODE_SYSCTL_DIR} at another path and name that")
        return
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    m = {m["mountPath"]: m for m in container.get("volumeMounts", [])}.get(sysctl_dir)
    if not m:
        error(f"netfilter_sysctl_dir {sysctl_dir} is not a volume mount")
        return
    if m.get("readOnly") or m.get("subPath"):
        error(f"{sysctl_dir} must be mounted read-write and whole: rld writes the sysctl there")
    host = volumes.get(m["name"], {}).get("hostPath", {})
    if host.get("path") != NODE_SYSCTL_DIR or host.get("type") != "Directory":
        error(f"{sysctl_dir} must be the node's {NODE_SYSCTL_DIR} (hostPath, type Directory)")


def flag_or_setting(args, config, setting, default):
    """A setting of rld.yaml as rld sees it: its flag in the arguments wins (--metrics-listen for
    metrics_listen)."""
    flag = "--" + setting.replace("_", "-")
    if flag in args[:-1]:
        return str(args[args.index(flag) + 1])
    return str(config.get(setting, default))


# Where the metrics endpoint may listen in the pod: the node's own address, from the downward
# API, as a $(VAR) of the container's environment (hostNetwork: the pod's address is the node's).
NODE_ADDRESS_FIELDS = ("status.hostIP", "status.podIP")
EVERY_ADDRESS = ("", "0.0.0.0", "::", "[::]", "*")


def check_metrics_exposure(container, config, args):
    """docs/operations.md, "The event loop under a flood": an endpoint others can reach takes
    CPU ahead of packet work at real-time priority, so firewall it or set 0. A hostNetwork pod
    listens in the node's namespace, where the manifest cannot firewall it (a NetworkPolicy
    does not cover hostNetwork pods under most network plugins): the endpoint listens on the
    node's address, not every address, and its threads run at normal priority."""
    listen = flag_or_setting(args, config, "metrics_listen", "127.0.0.1:9464")
    host = listen.rpartition(":")[0]
    if host in EVERY_ADDRESS:
        error(f"metrics_listen {listen} listens on every address of the node: listen on the "
              f"node's address ($(NODE_IP) from {NODE_ADDRESS_FIELDS[0]})")
    m = re.fullmatch(r"\$\((\w+)\)", host)
    if m:
        env = {e["name"]: e for e in container.get("env", [])}
        field = env.get(m.group(1), {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
        if field not in NODE_ADDRESS_FIELDS:
            error(f"metrics_listen {listen}: {m.group(1)} must be the node's address "
                  f"(fieldRef {NODE_ADDRESS_FIELDS[0]}), not {field}")
    if host not in ("127.0.0.1", "localhost"):
        priority = flag_or_setting(args, config, "metrics_realtime_priority", "1")
        if priority != "0":
            error(f"metrics_realtime_priority is {priority} on an endpoint others can reach "
                  f"({listen}): set 0 (docs/operations.md, The event loop under a flood)")


def main_cleanup(manifest, unit, containerfile):
    """deploy/kubernetes/rld-cleanup.yaml: rld --cleanup once on every node."""
    objects = load_objects(manifest)
    ds = objects.get(("DaemonSet", "rld-cleanup"))
    if not ds:
        error("no DaemonSet rld-cleanup")
        return
    namespace = ds["metadata"].get("namespace")
    if namespace == "rl":
        error("namespace rl goes with rld-daemonset.yaml, which is deleted first")
    if ("Namespace", namespace) not in objects:
        error(f"namespace {namespace} is not defined")
    pod = ds["spec"]["template"]["spec"]
    if pod.get("hostNetwork") is not True:
        error("hostNetwork must be true: the node's interfaces, nftables table and sysctl")
    if {"operator": "Exists"} not in pod.get("tolerations", []):
        error("tolerate every taint: every node rld ran on must be cleaned up")
    inits = [c for c in pod.get("initContainers", []) if c["name"] == "cleanup"]
    if len(inits) != 1:
        error("no init container 'cleanup'")
        return
    (c,) = inits
    entrypoint = re.findall(r"^ENTRYPOINT\s+(.+)$", open(containerfile).read(), re.M)
    if entrypoint != ['["/usr/sbin/rld"]'] or "command" in c:
        error("the cleanup must run the image's entrypoint, rld")
    if c.get("args") != CLEANUP_ARGS:
        error(f"the cleanup runs {c.get('args')}, not {CLEANUP_ARGS} (the command the tests run)")
    caps = c.get("securityContext", {}).get("capabilities", {})
    want = unit_capabilities(unit)
    if caps.get("drop") != ["ALL"] or set(caps.get("add", [])) != want:
        error(f"capabilities: drop ALL, add the unit's {sorted(want)}")
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    bpf = {m["mountPath"]: m for m in c.get("volumeMounts", [])}.get("/sys/fs/bpf")
    if not bpf or volumes.get(bpf["name"], {}).get("hostPath", {}).get("path") != "/sys/fs/bpf":
        error("/sys/fs/bpf must be the node's (hostPath): the pins are there")
    args = c.get("args") or []
    if "--netfilter-sysctl-dir" in args[:-1]:
        check_sysctl_dir(pod, c, args[args.index("--netfilter-sysctl-dir") + 1])


def main():
    if sys.argv[1] == "--cleanup":
        main_cleanup(*sys.argv[2:5])
        return
    manifest, unit, rlctl, containerfile = sys.argv[1:5]
    objects = load_objects(manifest)

    ds = objects.get(("DaemonSet", "rld"))
    if not ds:
        error("no DaemonSet rld")
        return
    namespace = ds["metadata"].get("namespace")
    for (kind, name), d in objects.items():
        if kind != "Namespace" and d["metadata"].get("namespace") != namespace:
            error(f"{kind} {name} is not in namespace {namespace}")
    if ("Namespace", namespace) not in objects:
        error(f"namespace {namespace} is not defined")
    spec = ds["spec"]
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"].get("labels", {})
    for k, v in spec["selector"].get("matchLabels", {}).items():
        if labels.get(k) != v:
            error(f"selector {k}={v} does not select the pod template")
    if pod.get("hostNetwork") is not True:
        error("hostNetwork must be true: rld limits the node's own interfaces")
    (c,) = [c for c in pod["containers"] if c["name"] == "rld"]
    sc = c.get("securityContext", {})
    caps = sc.get("capabilities", {})
    if caps.get("drop") != ["ALL"]:
        error("capabilities: drop ALL, then add what rld needs")
    want = unit_capabilities(unit)
    if set(caps.get("add", [])) != want:
        error(f"capabilities add {caps.get('add')} is not the unit's {sorted(want)}")
    if sc.get("privileged"):
        error("privileged: the capabilities are enough")
    if sc.get("allowPrivilegeEscalation") is not False:
        error("allowPrivilegeEscalation must be false (the unit's NoNewPrivileges)")

    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    bpf = mounts.get("/sys/fs/bpf")
    if not bpf or volumes.get(bpf["name"], {}).get("hostPath", {}).get("path") != "/sys/fs/bpf":
        error("/sys/fs/bpf must be the node's (hostPath): pins outlive the pod")
    config = yaml.safe_load(
        objects.get(("ConfigMap", "rl-config"), {}).get("data", {}).get("rld.yaml", "") or "{}")
    args = c.get("args", [])
    config_path = args[args.index("--config") + 1] if "--config" in args else "/etc/rl/rld.yaml"
    if config_path not in mounts or "configMap" not in volumes.get(mounts[config_path]["name"], {}):
        error(f"{config_path} does not come from a ConfigMap")
    policy_dir = config.get("policy_dir", "/etc/rl/policies")
    pm = mounts.get(policy_dir)
    if not pm or "configMap" not in volumes.get(pm["name"], {}):
        error(f"the policy directory {policy_dir} does not come from a ConfigMap")
    elif "subPath" in pm:
        error("the policies are mounted with subPath, which the kubelet never updates")
    sysctl_dir = config.get("netfilter_sysctl_dir", NODE_SYSCTL_DIR)
    if "--netfilter-sysctl-dir" in args[:-1]:
        sysctl_dir = args[args.index("--netfilter-sysctl-dir") + 1]
    check_sysctl_dir(pod, c, sysctl_dir)
    socket_dir = os.path.dirname(config.get("control_socket", "/run/rl/rld.sock"))
    if socket_dir not in mounts:
        error(f"{socket_dir} (control socket) needs a writable volume: the root is read-only")

    check_metrics_exposure(c, config, args)
    listen = flag_or_setting(args, config, "metrics_listen", "127.0.0.1:9464")
    host, _, port = listen.rpartition(":")
    if host in ("127.0.0.1", "localhost"):
        error("metrics_listen is loopback: Prometheus and the probes cannot reach it")
    ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
    if ports.get("metrics") != int(port):
        error(f"container port 'metrics' {ports.get('metrics')} is not metrics_listen's {port}")
    for probe, path in (("startupProbe", "/healthz"), ("livenessProbe", "/healthz"),
                        ("readinessProbe", "/readyz")):
        get = c.get(probe, {}).get("httpGet", {})
        if get.get("path") != path or get.get("port") not in ("metrics", int(port)):
            error(f"{probe} must GET {path} on the metrics port")
    exposed = re.findall(r"^EXPOSE\s+(\d+)", open(containerfile).read(), re.M)
    if exposed != [port]:
        error(f"the image exposes {exposed}, rld listens on {port}")

    # Every policy shipped in the ConfigMap passes rld's own validator.
    policies = objects.get(("ConfigMap", "rl-policies"), {}).get("data", {})
    if not policies:
        error("no policies in ConfigMap rl-policies")
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, text in policies.items():
            if not name.endswith((".yaml", ".yml")):
                error(f"policy key {name} does not end in .yaml: rld would ignore it")
            paths.append(os.path.join(tmp, name))
            open(paths[-1], "w").write(text)
        r = subprocess.run([rlctl, "policy", "validate", *paths], capture_output=True, text=True)
        if r.returncode != 0:
            error("rl-policies do not validate:\n" + r.stderr)


if __name__ == "__main__":
    main()
    for e in errors:
        print("error:", e, file=sys.stderr)
    print("manifest: " + ("FAIL" if errors else "ok"))
    sys.exit(1 if errors else 0)
