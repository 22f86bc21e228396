"""A thin JSON client over the official ``kubernetes`` package's transport, with a timeout on
every call and bounded retries.

Why not the generated ``CoreV1Api`` models: deserializing 500 pods into pydantic models costs
more than the whole tick may (``benchmarks/k8s_bench.py``); the backend needs a few fields of
plain JSON.  The official client still does the parts that must be right: kubeconfig loading
(contexts, CA, tokens, client certificates), TLS and the connection pool.

Retries: 429 and 5xx always, 409 only when it is an optimistic-concurrency ``Conflict`` (not
``AlreadyExists``), and transport errors (refused, reset, timed out); each with doubling backoff.
What is left after the last attempt is a ``BackendError`` (``ApiError`` carries the status), so
a down API server makes the reconciler's tick Stalled with the reason.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import urllib3
from kubernetes import config as kube_config
from kubernetes.client import ApiClient, Configuration, rest

from allotment.errors import BackendError

JSON = dict[str, Any]
APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


def _in_cluster() -> bool:
    """Inside a pod with no kubeconfig of its own (``KUBECONFIG`` unset, no ``~/.kube/config``):
    the in-cluster service account is the identity, as every controller does."""
    return (
        bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
        and not os.environ.get("KUBECONFIG")
        and not os.path.exists(os.path.expanduser("~/.kube/config"))
    )


class ApiError(BackendError):
    """The API server answered with an error status (after retries, if it was retriable)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"HTTP {status} {reason}: {message}")
        self.status, self.reason = status, reason


class KubeClient:
    def __init__(
        self,
        api: ApiClient,
        *,
        timeout_s: float = 10.0,
        attempts: int = 4,
        backoff_s: float = 0.2,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        # our retries, counted and bounded, not urllib3's (its pool is built with the setting)
        api.configuration.retries = False
        api.rest_client = rest.RESTClientObject(api.configuration)
        self.api, self.timeout_s, self.attempts = api, timeout_s, attempts
        self.backoff_s, self._sleep = backoff_s, sleep

    @classmethod
    def from_kubeconfig(
        cls, path: str | None = None, context: str | None = None, **kw: Any
    ) -> KubeClient:
        try:
            if path is None and context is None and _in_cluster():
                # a pod of deploy/kubernetes: its service account's token and CA
                cfg = Configuration()
                kube_config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
                api = ApiClient(cfg)
            else:
                api = kube_config.new_client_from_config(  # type: ignore[no-untyped-call]
                    config_file=path, context=context
                )
        except (kube_config.ConfigException, OSError, ValueError) as exc:
            raise BackendError(f"kubeconfig {path or '(default)'}: {exc}") from None
        return cls(api, **kw)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> JSON:
        """One API call; the decoded JSON answer (``{}`` when there is none)."""
        last = ""
        for attempt in range(self.attempts):
            if attempt:
                self._sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                status, data = self._once(method, path, query, body, content_type)
            except urllib3.exceptions.HTTPError as exc:
                last = f"API server unreachable: {type(exc).__name__}: {exc}"
                continue
            if status < 400:
                return data
            reason, message = str(data.get("reason", "")), str(data.get("message", ""))
            retriable = status in _RETRY_STATUS or (status == 409 and reason == "Conflict")
            if not retriable:
                raise ApiError(status, reason, message)
            last = f"HTTP {status} {reason}: {message}"
        raise BackendError(f"{method} {path} failed after {self.attempts} attempts: {last}")

    def _once(
        self,
        method: str,
        path: str,
        query: Mapping[str, str] | None,
        body: Any,
        content_type: str,
    ) -> tuple[int, JSON]:
        headers = {"Accept": "application/json", "Content-Type": content_type}
        m, url, hdrs, payload, _ = self.api.param_serialize(
            method,
            path,
            query_params=sorted((query or {}).items()),
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        resp = self.api.call_api(m, url, hdrs, payload, _request_timeout=self.timeout_s)
        raw = resp.read()  # type: ignore[no-untyped-call]
        try:
            data = json.loads(raw) if raw else {}
        except ValueError:
            data = {"message": raw[:200].decode("utf-8", "replace")}
        return int(resp.status), data if isinstance(data, dict) else {"items": data}

    # ---------------------------------------------------------------- conveniences --
    def get(self, path: str, **query: str) -> JSON:
        return self.request("GET", path, query=query)

    def list_all(self, path: str, limit: int = 500, **query: str) -> list[JSON]:
        """Every item of a list, following ``continue`` tokens (pages of ``limit``)."""
        items: list[JSON] = []
        token = ""
        while True:
            q = {**query, "limit": str(limit)}
            if token:
                q["continue"] = token
            page = self.request("GET", path, query=q)
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue") or ""
            if not token:
                return items

    def apply(self, path: str, obj: JSON, manager: str, *, dry_run: bool = False) -> JSON:
        """Server-side apply under ``manager``, taking over fields another manager changed."""
        q = {"fieldManager": manager, "force": "true"}
        if dry_run:
            q["dryRun"] = "All"
        return self.request("PATCH", path, query=q, body=obj, content_type=APPLY)

    def merge_patch(self, path: str, patch: JSON, manager: str) -> JSON:
        return self.request(
            "PATCH", path, query={"fieldManager": manager}, body=patch, content_type=MERGE
        )
