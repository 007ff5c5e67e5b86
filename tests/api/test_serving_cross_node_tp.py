"""Tensor parallelism across servers over the API: DeepSeek-V3 (671B, block FP8) needs two 8 × H100 servers, and
SGLang's documented way to serve it is TP 16 over both (`--tp 16 --nnodes 2 --node-rank 0/1 --dist-init-addr`: SGLang
docs, "DeepSeek V3/V3.1/R1 Usage", multi-node). With MTP speculation no engine pipelines, so cross-node TP is the one
shape that serves it on the seeded catalog's H100 SKU (its InfiniBand add-on joins the servers)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from fastapi.testclient import TestClient

from app.text.messages import launch as launch_text

FLAGS = json.loads(
    (Path(__file__).parents[1] / "planner" / "data" / "serving_engine_flags.json").read_text(encoding="utf-8")
)

DEEPSEEK = {
    "model": {"preset": "deepseek-v3"},
    "task": "serving",
    "serving": {
        "input_tokens": 2000,
        "output_tokens": 500,
        "requests_per_s": 10,
        "engine": "sglang",
        "speculative": {"method": "mtp", "num_speculative_tokens": 1, "acceptance_rate": 0.85},
    },
    "constraints": {"gpu_types": ["h100-80g-sxm"]},
}


def test_deepseek_v3_on_h100_is_tp16_over_two_servers(client: TestClient) -> None:
    response = client.post("/recommend", json=DEEPSEEK)
    assert response.status_code == 200, response.text
    options = response.json()["options"]
    across = [o for o in options if o["launch"]["gpus_per_replica"] == 16 and o["launch"]["servers_per_replica"] == 2]
    assert across, response.text
    option = across[0]
    assert option["cost"]["monthly_effective"], option["cost"]  # priced, the InfiniBand add-on with it
    launch = option["launch"]
    assert launch["needs_infiniband"] is True
    assert "--tp-size 16" in launch["command"] and "--pp-size" not in launch["command"]
    assert "--speculative-algorithm NEXTN" in launch["command"]
    heads, worker = launch["node_commands"]
    for rank, command in enumerate((heads, worker)):
        assert f"--nnodes 2 --node-rank {rank} --dist-init-addr $HEAD_IP:5000" in command
        _check_sglang_flags(command)
    assert "TP 16" in launch["layout"] and "--node-rank" in launch["layout"] and "ib-ndr-400" in launch["layout"]


def test_the_layout_and_note_are_worded_in_chinese_too(client: TestClient) -> None:
    launch = client.post("/recommend", json=DEEPSEEK).json()["options"][0]["launch"]
    texts = [launch["texts"]["layout"], *launch["texts"]["notes"]]
    for text in texts:
        assert launch_text(text["code"], text["params"], "zh") != launch_text(text["code"], text["params"], "en")
    assert "张量并行 16" in launch_text(texts[0]["code"], texts[0]["params"], "zh")


def _check_sglang_flags(command: str) -> None:
    """Every flag is one SGLang's ServerArgs declares (tests/planner/data/serving_engine_flags.json, read from
    python/sglang/srt/server_args.py at the commit launch.versions names)."""
    spec = FLAGS["engines"]["sglang"]
    words = shlex.split(command[command.index(spec["program"]) + len(spec["program"]) :])
    for word in words:
        if word.startswith("--"):
            assert word in spec["flags"], f"SGLang has no {word}: {command}"


def test_estimate_over_two_servers_runs_tp16_only_over_rdma(client: TestClient) -> None:
    """/estimate's default split for two servers with MTP on SGLang: one TP 16 group where an RDMA fabric joins them;
    over a TCP network only a pipeline could cross, which SGLang does not speculate on (422 on serving.speculative)."""
    body = {key: value for key, value in DEEPSEEK.items() if key != "constraints"}
    hardware = {"gpu": "h100-80g-sxm", "gpus_per_node": 8, "nodes": 2}
    over_ib = client.post("/estimate", json=body | {"hardware": hardware | {"inter_node_fabric": "ib-ndr-400"}})
    assert over_ib.status_code == 200, over_ib.text
    assert (over_ib.json()["plan"]["tp"], over_ib.json()["plan"]["pp"]) == (16, 1)
    over_tcp = client.post("/estimate", json=body | {"hardware": hardware | {"inter_node_fabric": "eth-25"}})
    assert over_tcp.status_code == 422, over_tcp.text
    assert "serving.speculative" in [e["field"] for e in over_tcp.json()["errors"]]
