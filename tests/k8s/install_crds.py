"""Install the KAI-Scheduler CRDs and the Kueue CRDs a 1.20 API server accepts, and wait until
each is Established.  Create, or replace when present, so a second run is harmless (not
server-side apply: 1.20's typed schema for CRDs has no ``x-kubernetes-validations`` and refuses
the apply, while a create drops the CEL rules silently).

Kueue's ``workloads`` CRD is skipped: 1.20 rejects its ``default: ""`` on string fields
(../shared/k8s-crds/APISERVER.md); the Workload object is tested against its schema only.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import yaml
from kubernetes import config
from kubernetes.client import ApiextensionsV1Api
from kubernetes.client.exceptions import ApiException

SKIP = {"kueue.x-k8s.io_workloads.yaml"}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kubeconfig", required=True)
    ap.add_argument("--crds", required=True, type=Path)
    args = ap.parse_args()
    api = ApiextensionsV1Api(config.new_client_from_config(args.kubeconfig))
    files = sorted(p for p in args.crds.glob("*/*.yaml") if p.name not in SKIP)
    if not files:
        print(f"no CRD files under {args.crds}", file=sys.stderr)
        return 2
    names = []
    for f in files:
        crd = yaml.safe_load(f.read_text())
        names.append(crd["metadata"]["name"])
        try:
            api.create_custom_resource_definition(crd, _request_timeout=30)
        except ApiException as exc:
            if exc.status != 409:
                raise
            have = api.read_custom_resource_definition(crd["metadata"]["name"], _request_timeout=10)
            crd["metadata"]["resourceVersion"] = have.metadata.resource_version
            api.replace_custom_resource_definition(
                crd["metadata"]["name"], crd, _request_timeout=30
            )
    deadline = time.monotonic() + 60
    for name in names:
        while True:
            got = api.read_custom_resource_definition(name, _request_timeout=10)
            conds = {c.type: c.status for c in (got.status.conditions or [])}
            if conds.get("Established") == "True":
                break
            if time.monotonic() > deadline:
                print(f"CRD {name} not established: {conds}", file=sys.stderr)
                return 1
            time.sleep(0.2)
    print(f"installed {len(names)} CRDs: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
