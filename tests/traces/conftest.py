"""Paths to the shared real traces and the small samples kept with the tests."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path("/work/shared/traces")
SWF = SHARED / "pwa-nasa-ipsc-1993-swf" / "NASA-iPSC-1993-3.1-cln.swf.gz"
ALIBABA_DIR = SHARED / "alibaba-gpu-v2023-openb"
ALIBABA = ALIBABA_DIR / "openb_pod_list_default.csv"
DATA = Path(__file__).parent / "data"
SACCT = DATA / "sacct_sample.txt"


@pytest.fixture
def swf_path() -> Path:
    if not SWF.exists():
        pytest.skip("shared SWF trace not present")
    return SWF


@pytest.fixture
def alibaba_path() -> Path:
    if not ALIBABA.exists():
        pytest.skip("shared Alibaba trace not present")
    return ALIBABA
