"""Disaggregated prefill/decode deployments (app/planner/serving_disagg.py): pools sized by the simulation, the KV
sent over the SKU's fabric, priced as the servers both pools occupy, launched as SGLang PD, vLLM with NixlConnector or
TensorRT-LLM disaggregated serving with flags their parsers declare (tests/planner/data/serving_engine_flags.json)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig, max_concurrency, meets_at_peak, peak_latency
from app.estimator.serving_disagg import decode_config
from app.estimator.serving_sim import mdc_wait_quantiles
from app.estimator.specs import EstimatorError
from app.planner.offers import Constraints
from app.planner.serving import search_serving
from app.planner.serving_disagg import merged, search_disaggregated
from app.planner.serving_option import replica_cluster
from tests.planner.test_serving_launch import FLAGS, H100_IB, _check, _flags
from tests.planner.test_serving_search import OFFERS

LLAMA_70B = get_preset("llama-3.1-70b").model
RAG = ServingConfig(
    input_tokens=8000, output_tokens=300, requests_per_s=5, engine="sglang", precision="fp8", weights="fp8",
    slo_ttft_ms=2000, slo_tpot_ms=50,
)  # fmt: skip


def test_pools_meet_the_slo_at_the_peak_and_are_priced_as_their_servers() -> None:
    found = search_disaggregated(LLAMA_70B, RAG, [H100_IB], Constraints(max_nodes=16))
    (option,) = found.options
    assert option.pools is not None and option.kv_transfer_ms is not None
    prefill, decode = option.pools["prefill"], option.pools["decode"]
    servers = -(-prefill["gpus"] // 8) + -(-decode["gpus"] // 8)
    assert option.config.nodes == servers and option.cost.units == servers
    peak = option.estimate.latency["peak"] if option.estimate.latency else None
    assert peak is not None and option.estimate.meets_slo is True
    assert peak.ttft.p90 * 1e3 <= 2000 and peak.tpot.p90 * 1e3 <= 50
    assert peak.ttft.p50 * 1e3 >= option.kv_transfer_ms  # the transfer is part of the time to first token


def test_the_launch_is_sglang_pd_with_its_own_flags() -> None:
    (option,) = search_disaggregated(LLAMA_70B, RAG, [H100_IB], Constraints(max_nodes=16)).options
    launch = option.launch
    for pool in ("prefill", "decode"):
        for command in launch["commands"][pool].splitlines():  # one line per replica on a server
            assert f"--disaggregation-mode {pool} --disaggregation-transfer-backend mooncake" in command
            _check("sglang", _engine_part(launch, "sglang", pool) | {"command": command})
    assert "--pd-disaggregation" in dict(_router_flags("sglang", launch["commands"]["router"]))
    assert launch["needs_infiniband"] is True
    assert not any("share nothing" in note for note in launch["notes"])


def test_a_sku_without_a_fabric_cannot_host_pools() -> None:
    found = search_disaggregated(LLAMA_70B, RAG, OFFERS[:1], Constraints(max_nodes=16))
    assert not found.options
    assert [code for _, code, _ in found.rejected] == ["no_fabric"]


def test_auto_ranks_both_and_keeps_the_cheaper() -> None:
    constraints = Constraints(max_nodes=16)
    colocated = search_serving(LLAMA_70B, RAG, [H100_IB], constraints)
    pools = search_disaggregated(LLAMA_70B, RAG, [H100_IB], constraints)
    both = merged(colocated, pools, constraints)
    assert both.options[0].cost.compared_monthly == min(
        o.cost.compared_monthly for o in colocated.options + pools.options
    )
    assert [o.rank for o in both.options] == list(range(1, len(both.options) + 1))


def _engine_part(launch: dict, engine: str, pool: str) -> dict:
    """A pool's command as the single-server check reads it: that engine's serve command and its own version."""
    return {**launch, "command": launch["commands"][pool], "versions": {engine: launch["versions"][engine]}}


def _router_flags(engine: str, command: str) -> list[tuple[str, str | None]]:
    spec = FLAGS["disaggregation"][engine]
    assert command.startswith(spec["program"]), command
    flags = _flags(engine, command[len(spec["program"]) :])
    for flag, _ in flags:
        assert flag in spec["flags"], f"{spec['source']} declares no {flag}: {command}"
    return flags


def test_vllm_pools_run_nixl_connector_behind_its_proxy() -> None:
    (option,) = search_disaggregated(
        LLAMA_70B, replace(RAG, engine="vllm"), [H100_IB], Constraints(max_nodes=16)
    ).options
    launch = option.launch
    spec = FLAGS["disaggregation"]["vllm"]["kv_transfer_config"]
    for pool, role in (("prefill", "kv_producer"), ("decode", "kv_consumer")):
        for command in launch["commands"][pool].splitlines():  # one line per replica on a server
            _check("vllm", _engine_part(launch, "vllm", pool) | {"command": command})
            (config,) = [value for flag, value in _flags("vllm", command) if flag == "--kv-transfer-config"]
            parsed = json.loads(config or "{}")
            assert set(parsed) <= set(spec["keys"]) and parsed["kv_role"] == role
            assert parsed["kv_role"] in spec["kv_role"] and parsed["kv_connector"] == "NixlConnector"
            assert command.startswith("VLLM_NIXL_SIDE_CHANNEL_HOST=")
    flags = dict(_router_flags("vllm", launch["commands"]["router"]))
    assert flags["--host"] == "0.0.0.0"  # the proxy binds 127.0.0.1 unless told
    assert "vllm-kv-connector" in launch["versions"] and launch["needs_infiniband"] is True
    assert "NixlConnector" in launch["layout"]


def test_trtllm_pools_run_behind_trtllm_serve_disaggregated() -> None:
    cfg = replace(RAG, engine="trt-llm")
    (option,) = search_disaggregated(LLAMA_70B, cfg, [H100_IB], Constraints(max_nodes=16)).options
    launch = option.launch
    for pool in ("prefill", "decode"):
        for command in launch["commands"][pool].splitlines():  # one line per replica on a server
            _check("trt-llm", _engine_part(launch, "trt-llm", pool) | {"command": command})
            assert command.count("--extra_llm_api_options") == 1
    assert dict(_router_flags("trt-llm", launch["commands"]["router"])) == {"-c": "disagg_config.yaml"}
    assert "trt-llm-disaggregated" in launch["versions"]
    assert any("cache_transceiver_config" in note for note in launch["notes"])
    assert "trtllm-serve disaggregated" in launch["layout"]


@pytest.mark.parametrize("engine", ["vllm", "trt-llm"])
def test_pool_launch_words_are_in_both_languages(engine: str) -> None:
    from app.text.messages import launch as launch_text

    cfg = replace(RAG, engine=engine)
    (option,) = search_disaggregated(LLAMA_70B, cfg, [H100_IB], Constraints(max_nodes=16)).options
    texts = option.launch["texts"]
    for text in [texts["layout"], *texts["notes"]]:
        chinese = launch_text(text["code"], text["params"], "zh")
        assert chinese != launch_text(text["code"], text["params"], "en") and any(
            "\u4e00" <= c <= "\u9fff" for c in chinese
        )


@pytest.mark.parametrize("changes", [{"requests_per_s": None, "concurrency": 8}, {"batching": "static"}])
def test_pools_are_refused_where_not_modelled(changes: dict) -> None:
    with pytest.raises(EstimatorError) as error:
        search_disaggregated(LLAMA_70B, replace(RAG, **changes), [H100_IB], Constraints())
    assert error.value.field == "serving.disaggregated"


def test_auto_names_each_refused_sku_once() -> None:
    constraints = Constraints(max_nodes=16)
    both = merged(
        search_serving(LLAMA_70B, RAG, OFFERS[:1] + [H100_IB], constraints),
        search_disaggregated(LLAMA_70B, RAG, OFFERS[:1] + [H100_IB], constraints),
        constraints,
    )
    pairs = [(sku, code) for sku, code, _ in both.rejected]
    assert len(pairs) == len(set(pairs))
    assert not {sku for sku, _ in pairs} & {o.offer.sku_id for o in both.options}


LONG = ServingConfig(
    input_tokens=8000, output_tokens=500, requests_per_s=10, engine="sglang", precision="fp8", weights="fp8",
    slo_ttft_ms=1500, slo_tpot_ms=40,
)  # fmt: skip


@pytest.mark.parametrize("cfg", [RAG, LONG])
def test_pools_are_sized_and_reported_at_the_peak(cfg: ServingConfig) -> None:
    """As a colocated option: the peak is requests_per_s × peak_factor, carried by both pools, and the headroom is
    what they carry within the SLO over that peak (not over the average): at most the pools' load to saturation
    there, held to the simulated percentiles (planner.serving_headroom.simulated_headroom), at least 1."""
    (option,) = search_disaggregated(LLAMA_70B, cfg, [H100_IB], Constraints(max_nodes=16), peak_factor=1.5).options
    assert cfg.requests_per_s is not None
    assert option.peak.requests_per_s == pytest.approx(cfg.requests_per_s * 1.5, rel=1e-3)
    assert option.estimate.requests_per_s == pytest.approx(cfg.requests_per_s, rel=1e-3)
    assert option.estimate.utilization is not None
    assert 1.0 <= option.headroom <= 1 / option.estimate.utilization["peak"] * (1 + 1e-9)


@pytest.mark.parametrize("cfg", [RAG, LONG])
def test_pools_fill_the_servers_they_rent(cfg: ServingConfig) -> None:
    """The servers are rented whole: each pool runs replicas on every GPU of its servers, and throughput per GPU
    counts every GPU rented."""
    (option,) = search_disaggregated(LLAMA_70B, cfg, [H100_IB], Constraints(max_nodes=16)).options
    assert option.pools is not None
    for pool in option.pools.values():
        assert pool["gpus"] % 8 == 0, option.pools  # whole 8-GPU servers, none idle
    assert sum(pool["gpus"] for pool in option.pools.values()) == option.config.gpus
    per_gpu = option.estimate.output_tokens_per_s / option.config.gpus
    assert option.estimate.output_tokens_per_s_per_gpu == pytest.approx(per_gpu)


@pytest.mark.parametrize("engine", ["sglang", "vllm", "trt-llm"])
def test_replicas_sharing_a_server_are_pinned_and_each_is_routed_by_its_own_port(engine: str) -> None:
    """Review R6: two TP 4 prefill replicas on one 8-GPU server took GPUs 0-3 and the default port both, the router
    named one `<prefill-1>:30000` for all of them, and launch.replicas x gpus_per_replica counted 8 GPUs a replica."""
    cfg = replace(RAG, engine=engine, requests_per_s=8, slo_tpot_ms=30)
    (option,) = search_disaggregated(LLAMA_70B, cfg, [H100_IB], Constraints(max_nodes=16)).options
    launch, pools = option.launch, option.pools
    assert pools is not None and pools["prefill"]["tp"] == 4  # two prefill replicas share each server
    instances = launch["instances"]
    for name in ("prefill", "decode"):
        mine = [i for i in instances if i["pool"] == name]
        assert len(mine) == pools[name]["replicas"] == launch["pools"][name]["replicas"]
        assert launch["pools"][name]["gpus_per_replica"] == pools[name]["tp"]
        for server in {i["server"] for i in mine}:
            here = [i for i in mine if i["server"] == server]
            gpus = [g for i in here for g in i["gpus"].split(",")]
            assert len(gpus) == len(set(gpus)) == len(here) * pools[name]["tp"] <= 8
            for key in ("port", "bootstrap_port", "side_channel_port"):
                taken = [i[key] for i in here if key in i]
                assert len(taken) == len(set(taken)), (key, here)
    assert sum(p["replicas"] * p["gpus_per_replica"] for p in launch["pools"].values()) == sum(
        p["gpus"] for p in pools.values()
    )
    prefill_lines = launch["commands"]["prefill"].splitlines()
    assert len(prefill_lines) == 2
    for line, instance in zip(prefill_lines, instances, strict=False):
        assert f"CUDA_VISIBLE_DEVICES={instance['gpus']} " in line and f"--port {instance['port']}" in line
        _check(engine, _engine_part(launch, engine, "prefill") | {"command": line})
    router = launch["commands"]["router"]
    if engine == "sglang":
        flags = _router_flags("sglang", router)
        assert [v for f, v in flags if f == "--prefill"] == [i["url"] for i in instances if i["pool"] == "prefill"]
        for instance in instances:
            if instance["pool"] == "prefill":
                assert f"--prefill {instance['url']} {instance['bootstrap_port']} " in router
                assert f"--disaggregation-bootstrap-port {instance['bootstrap_port']}" in launch["commands"]["prefill"]
        assert [v for f, v in flags if f == "--decode"] == [i["url"] for i in instances if i["pool"] == "decode"]
    if engine == "vllm":
        _router_flags("vllm", router)
        prefill = [i for i in instances if i["pool"] == "prefill"]
        hosts = " ".join(i["server"] for i in prefill)
        ports = " ".join(str(i["port"]) for i in prefill)
        assert f"--prefiller-hosts {hosts} --prefiller-ports {ports} " in router


def test_a_sku_refused_by_both_searches_is_named_once_with_its_binding_reason() -> None:
    """Review R9: DeepSeek-V3 on A100 servers without a fabric was rejected twice per SKU, gpu_memory (the colocated
    search, whose text already says no fabric joins servers) and no_fabric (the pools'); one row now, the pools'
    reason kept as a detail."""
    deepseek = get_preset("deepseek-v3").model
    cfg = ServingConfig(
        input_tokens=2000, output_tokens=500, requests_per_s=10, engine="sglang", slo_ttft_ms=3000, slo_tpot_ms=80
    )
    a100 = [offer for offer in OFFERS if offer.gpu.id.startswith("a100")]
    constraints = Constraints(max_nodes=8)
    both = merged(
        search_serving(deepseek, cfg, a100, constraints),
        search_disaggregated(deepseek, cfg, a100, constraints),
        constraints,
    )
    skus = [sku for sku, _, _ in both.rejected]
    assert skus and len(skus) == len(set(skus)) == len(a100)
    for _, code, params in both.rejected:
        assert code == "gpu_memory" and params["also"] == ["no_fabric"]


R8_2 = ServingConfig(
    input_tokens=6000, output_tokens=300, requests_per_s=8, engine="sglang", precision="fp8", weights="fp8",
    slo_ttft_ms=1500, slo_tpot_ms=40,
)  # fmt: skip


def test_a_decode_pool_at_its_slots_limit_waits_and_misses_the_ttft() -> None:
    """Review R8-2: the SGLang pools for 8 requests/s of 6000 + 300 tokens held their decode pool (4 × TP 2, 34 slots
    each) at 99 % of its slots at the peak and claimed p90 TTFT 1.09 s. 3 requests/s a replica, each slot held the
    simulated ~11 s, wait at least the M/D/c queue's (serving_sim.mdc_wait_quantiles: tens of seconds at p90): that
    wait is in the decode pool's TTFT, so such a pool misses a 1.5 s target."""
    cfg = replace(decode_config(R8_2), peak_factor=1.5)
    latency = peak_latency(LLAMA_70B, cfg, replica_cluster(H100_IB, 2, 1), tp=2, replicas=4)
    assert latency is not None
    slots = max_concurrency(LLAMA_70B, cfg, H100_IB.gpu, 2, 1)
    floor = mdc_wait_quantiles(8 * 1.5 / 4, slots, latency.held_s)
    assert floor.p90 > 10.0
    for q in ("p50", "p90", "p99"):
        assert latency.admission.at(q) >= floor.at(q)
    assert not meets_at_peak(latency, cfg)


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_the_decode_pools_wait_for_a_slot_is_in_the_joined_ttft(engine: str) -> None:
    """Both engines by one rule: the option meets the SLO at the peak with the decode pool's wait for a slot (at least
    the M/D/c queue's on its slots) added to the prefill pool's TTFT and the transfer, and the pool is not loaded to
    its slots (the M/D/c wait grows without bound as ρ → 1)."""
    cfg = replace(R8_2, engine=engine)
    (option,) = search_disaggregated(LLAMA_70B, cfg, [H100_IB], Constraints(max_nodes=16)).options
    assert option.pools is not None and option.estimate.meets_slo is True
    decode = option.pools["decode"]
    dcfg = replace(decode_config(cfg), peak_factor=1.5)
    at = peak_latency(
        LLAMA_70B, dcfg, replica_cluster(H100_IB, decode["tp"], 1), tp=decode["tp"], replicas=decode["replicas"]
    )
    assert at is not None
    slots = max_concurrency(LLAMA_70B, dcfg, H100_IB.gpu, decode["tp"], 1)
    floor = mdc_wait_quantiles(8 * 1.5 / decode["replicas"], slots, at.held_s)
    peak = option.estimate.latency["peak"] if option.estimate.latency else None
    assert peak is not None and peak.ttft.p90 * 1e3 <= 1500
    assert peak.ttft.p90 >= floor.p90 + (option.kv_transfer_ms or 0.0) / 1e3
    assert option.pool_utilization is not None and option.pool_utilization["decode"]["peak"] < 0.9


def test_a_decode_pool_at_its_throughput_limit_waits_and_misses_the_ttft() -> None:
    """Review R11-1: SGLang pools for 8 requests/s of 4,000 + 500 tokens (TTFT ≤ 1.5 s, TPOT ≤ 40 ms) held one TP 8
    decode replica at 99.6 % of the requests/s it completes at most at the 12 requests/s peak and claimed the SLO (a
    finite run starts empty and never reached that queue); at 8.1 requests/s the same search took four TP 4 replicas at
    62 %. Each slot is held as long as the steady state at that rate holds it (simulation `_steady_hold_s`: the slots
    all but full), so the M/D/c wait on the slots grows without bound as the pool nears its throughput, and the search
    at 8 requests/s takes what it takes at 8.1: no shown pool is loaded to within 10 % of what it completes."""
    chosen = []
    for rate in (8.0, 8.1):
        cfg = ServingConfig(
            input_tokens=4000, output_tokens=500, requests_per_s=rate, engine="sglang", slo_ttft_ms=1500,
            slo_tpot_ms=40,
        )  # fmt: skip
        options = search_disaggregated(LLAMA_70B, cfg, [H100_IB], Constraints(max_nodes=16)).options
        assert options
        for option in options:
            assert option.pool_utilization is not None
            assert option.estimate.meets_slo is not True or option.pool_utilization["decode"]["peak"] < 0.9
        chosen.append((options[0].config.nodes, options[0].pools))
    assert chosen[0] == chosen[1]
