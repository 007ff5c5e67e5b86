"""A serving option's launch: the engine's command line for one replica, how the replicas and the servers of a
multi-server replica are started, and the engine releases the flags were checked against. PURE.

Flags are those of each engine's own argument parser (tests/planner/data/serving_engine_flags.json names the file
and the commit each was read from; tests/planner/test_serving_launch.py checks every emitted flag against it):

- vLLM `vllm serve` (vllm/engine/arg_utils.py `EngineArgs.add_cli_args`). A replica over several servers runs as one
  Ray cluster: `ray start --head` on the first, `ray start --address` on the others, the command on the head with
  `--distributed-executor-backend ray` (vLLM docs "Distributed inference and serving", multi-node).
- SGLang `python -m sglang.launch_server` (python/sglang/srt/server_args.py `ServerArgs`: the flag is the field name,
  `tp_size` -> `--tp-size`). Over several servers every server runs the same command with `--nnodes`, its own
  `--node-rank` and the head's `--dist-init-addr` (no Ray); the HTTP server binds 127.0.0.1 unless `--host` says.
- TensorRT-LLM `trtllm-serve` (tensorrt_llm/commands/serve.py click options). Over several servers a replica is one
  MPI job: `mpirun` (or `srun --mpi=pmix`) starts tp x pp ranks, each wrapped by `trtllm-llmapi-launch`
  (TensorRT-LLM docs "trtllm-serve", multi-node serving with Slurm); `--host` defaults to localhost.

`--max-model-len` (SGLang `--context-length`, TensorRT-LLM `--max_seq_len`) is the longest request the replica
accepts: a stated `serving.max_model_len` / `max_request_tokens`, else the model's context (config.json, as vLLM
derives it), never the mean request; where a replica's KV cache holds fewer tokens, that many, since vLLM refuses to
start when one sequence of max_model_len does not fit its cache (vllm/v1/core/kv_cache_utils.py
`check_enough_kv_cache_memory`).

A quantised checkpoint is served as it ships: the engines read its config.json `quantization_config` themselves, so
no `--quantization` flag (an explicit one that differs from the checkpoint's method is refused at start-up:
vllm/config `_verify_quantization`). Which methods each engine reads, from its own loader:
vLLM vllm/model_executor/layers/quantization/__init__.py QUANTIZATION_METHODS; SGLang server_args.py
QUANTIZATION_CHOICES; TensorRT-LLM tensorrt_llm/_torch/model_config.py `load_hf_quant_config` (block FP8,
compressed-tensors, Model Optimizer; no AWQ, GPTQ, bitsandbytes or fbgemm FP8).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from app.estimator.checkpoints import Checkpoint, scheme_params
from app.estimator.serving import (
    ENGINE_DEFAULTS,
    ServingConfig,
    ServingEstimate,
    launch_max_seqs,
    sglang_memory_fraction,
)
from app.estimator.serving_levers import ENGINE_SPECULATION
from app.estimator.specs import ModelSpec
from app.estimator.vocabulary import INTEGER_WEIGHT_FORMATS
from app.planner.offers import Configuration
from app.planner.serving_multinode import node_commands
from app.text.messages import launch as launch_text

# The engine sources the flags were read from (tests/planner/data/serving_engine_flags.json holds the flag lists).
ENGINE_VERSIONS: dict[str, str] = {
    "vllm": "vllm-project/vllm@99d7eb5d6a51 vllm/engine/arg_utils.py",
    "sglang": "sgl-project/sglang@001067fffe33 python/sglang/srt/server_args.py",
    "trt-llm": "NVIDIA/TensorRT-LLM@4c05a74891e4 tensorrt_llm/commands/serve.py",
}
# quantization_config methods each engine loads as shipped (module docstring).
ENGINE_READS: dict[str, frozenset[str]] = {
    "vllm": frozenset({"fp8", "fbgemm_fp8", "awq", "gptq", "compressed-tensors", "bitsandbytes", "modelopt"}),
    "sglang": frozenset({"fp8", "awq", "gptq", "compressed-tensors", "bitsandbytes", "modelopt"}),
    "trt-llm": frozenset({"fp8", "compressed-tensors", "modelopt"}),
}
SGLANG_DIST_PORT = 5000  # any free port on the head server; SGLang's multi-node examples use 5000
HEAD = "$HEAD_IP"  # the first server of a replica, filled in by whoever starts it
NODE_RANK = "$NODE_RANK"

# 16-bit checkpoints quantised on load: `--quantization fp8` (W8A8 on GPUs with FP8 tensor cores, as the sizing
# assumes; FP8-Marlin weight-only on Ampere). int4/int8 need a quantised checkpoint, whose quantization_config the
# engine reads (vLLM awq_marlin.py / gptq_marlin.py `override_quantization_method` pick the Marlin kernels).
ONLINE_QUANTIZATION = {"fp8": "fp8"}
QUANTISED_CHECKPOINT = "<{fmt} checkpoint of {repo}>"
# A pasted config.json names no repository (its model_type is an architecture, not a checkpoint): the command names
# the checkpoint the customer holds, as a placeholder, and a note says so.
UNKNOWN_CHECKPOINT = "<path or repository of your checkpoint>"
UNKNOWN_QUANTISED_CHECKPOINT = "<path or repository of your {fmt} checkpoint>"
# TensorRT-LLM quantises with TensorRT Model Optimizer (examples/llm_ptq/hf_ptq.py --qformat) and sets an FP8 KV cache
# through the LLM API's KvCacheConfig(dtype="fp8"), passed to trtllm-serve as --extra_llm_api_options YAML.
TRTLLM_QFORMAT = {"fp8": "fp8", "int4": "int4_awq", "int8": "int8_wo"}
TRTLLM_KV_OPTIONS = "extra_llm_api_options.yaml"

FLAG = {"vllm": "max-model-len", "sglang": "context-length", "trt-llm": "max_seq_len"}
# An EAGLE-3 head is trained for one target model: the launch names it as a placeholder for the one published for the
# model (or trained with EAGLE's or SpecForge's code).
DRAFT_HEAD = "<EAGLE-3 draft head for {repo}>"
UNKNOWN_DRAFT_HEAD = "<EAGLE-3 draft head for your checkpoint>"


@dataclass(frozen=True, slots=True)
class Served:
    """What a launch serves: the repository, the checkpoint it ships, the model's context (None: unknown), and
    the variant it was picked as, with the other one (for the note)."""

    repo: str | None = None
    checkpoint: Checkpoint = field(default_factory=Checkpoint)
    context: int | None = None
    variant: tuple[str, str, str] | None = None  # (variant, other variant, other repository)


@dataclass(slots=True)
class _Launch:
    """One replica's command line in parts, and the notes said about it."""

    engine: str
    tp: int
    pp: int
    nodes: int  # servers of one replica
    per_node: int  # GPUs of one replica on each of its servers
    texts: list[dict[str, Any]] = field(
        default_factory=list
    )  # the notes as codes and parameters (app/text/messages.py)
    dp_attention: bool = False  # DP attention over the tp ranks, the routed experts split over them (EP)
    rank_seqs: int = 0  # under DP attention, the sequences each rank runs at most (the engine's flag, read per rank)
    # the step's token budget the estimate simulated (ServingEstimate.token_budget), stated because the engines'
    # defaults differ by GPU: vLLM's OpenAI server takes 2,048 under 70 GiB and on the A100, 8,192 above
    # (vllm-project/vllm vllm/engine/arg_utils.py `get_batch_defaults`, vllm#17885), SGLang's chunked_prefill_size
    # 2,048 to 16,384 by GPU memory (sgl-project/sglang python/sglang/srt/server_args.py)
    token_budget: int = 0

    def note(self, code: str, **params: Any) -> None:
        self.texts.append({"code": code, "params": params})


def launch_block(
    model: ModelSpec,
    cfg: ServingConfig,
    shape: tuple[int, int, int],
    config: Configuration,
    estimate: ServingEstimate,
    slo_concurrency: float,
    served: Served | str | None,
    *,
    fabric: str | None = None,
) -> dict[str, Any]:
    """The engine's command line for one (tp, pp, replicas) replica, how replicas (and a replica's servers) are
    started, and the engine release the flags were checked against; `fabric` joins the servers of a replica that spans
    several (pipeline stages, or one TP group over all their GPUs); such a replica's `node_commands` are what each of
    its servers runs, the head first."""
    tp, pp, replicas = shape
    if not isinstance(served, Served):
        served = Served(repo=served)
    repo = served.repo or model.hf_repo or UNKNOWN_CHECKPOINT
    nodes = max(1, math.ceil(tp * pp / max(1, config.cards_per_node)))
    job = _Launch(cfg.engine, tp, pp, nodes, min(tp * pp, config.cards_per_node), dp_attention=cfg.dp_attention)
    job.token_budget = estimate.token_budget
    if (config.nodes > 1 or replicas > 1) and fabric is None:
        job.note("no_fabric")
    if fabric is not None:
        if pp > 1:
            job.note("pipeline", pp=pp, fabric=fabric)
        elif cfg.dp_attention:  # no TP all-reduce: the experts' all-to-all crosses the fabric
            job.note("ep_across", ranks=tp, nodes=nodes, fabric=fabric)
        else:
            job.note("tensor_across", tp=tp, nodes=nodes, fabric=fabric)
    if repo == UNKNOWN_CHECKPOINT:
        job.note("checkpoint_unknown", placeholder=UNKNOWN_CHECKPOINT, model=model.name)
    if served.variant is not None:
        variant, other, other_repo = served.variant
        job.note("variant", variant=variant, repo=repo, other=other, other_repo=other_repo)
    model_arg, quantization = _weights(job, served, cfg, repo)
    length = _length(job, served, cfg, estimate)
    command = _command(job, cfg, model_arg, quantization, length, replica_max_seqs(estimate, slo_concurrency))
    command = " ".join([command, *_levers(job, cfg, repo)])
    if cfg.batching == "static":
        job.note("static", engine=cfg.engine)
    layout = _dp_layout(job, model, replicas, fabric) if cfg.dp_attention else _layout(job, config, replicas, fabric)
    block: dict[str, Any] = {
        "engine": cfg.engine,
        "command": command,
        "replicas": replicas,
        "gpus_per_replica": tp * pp,
        "servers_per_replica": nodes,
        "max_model_len": length,
        "layout": launch_text(layout["code"], layout["params"]),
        "needs_infiniband": fabric is not None,
        "versions": {cfg.engine: ENGINE_VERSIONS[cfg.engine]},
        "notes": [launch_text(text["code"], text["params"]) for text in job.texts],
        "texts": {"layout": layout, "notes": job.texts},
    }
    if nodes > 1:
        block["node_commands"] = node_commands(cfg.engine, command, nodes, HEAD, NODE_RANK)
    return block


def replica_max_seqs(estimate: ServingEstimate, slo_concurrency: float) -> int:
    """--max-num-seqs: the most sequences a replica runs within the SLO (admitting more would break the
    latency targets; the load balancer queues the rest), never more than the KV cache holds. The one place that
    decides it: the option's serving.max_concurrency reads it too (review R8-3: it read the KV cache's 160 while the
    launch admitted 28). The rule is the estimator's (`launch_max_seqs`), so the simulated replica admits as many
    and queues the rest for a slot. "What the KV cache holds" is by the engine's rule (`held_sequences`: vLLM
    allocates as tokens come, so it runs more sequences than fit at whole length, preempting when they outgrow it)."""
    return launch_max_seqs(max(estimate.max_concurrency, estimate.held_sequences), slo_concurrency)


def _weights(job: _Launch, served: Served, cfg: ServingConfig, repo: str) -> tuple[str, str | None]:
    """What the command loads and the --quantization it passes (None: none), with the notes that say why: the
    checkpoint as shipped, a 16-bit checkpoint quantised on load, or another checkpoint to make or fetch."""
    ckpt, fmt, engine = served.checkpoint, cfg.weight_format, cfg.engine
    if ckpt.quantised:
        if ckpt.readable and ckpt.weights == fmt:
            if ckpt.method in ENGINE_READS[engine] and _trtllm_reads(engine, ckpt):
                job.note("as_shipped", repo=repo, scheme=ckpt.scheme, engine=engine, **scheme_params(ckpt))
                return repo, None
            job.note("engine_cannot_read", engine=engine, method=ckpt.method, repo=repo, fmt=fmt)
            return _trtllm_checkpoint(job, cfg, repo) if engine == "trt-llm" else _placeholder(fmt, repo), None
        job.note("other_format", repo=repo, scheme=ckpt.scheme, fmt=fmt, **scheme_params(ckpt))
        return _placeholder(fmt, repo), None
    if engine == "trt-llm":
        return (_trtllm_checkpoint(job, cfg, repo) if fmt in TRTLLM_QFORMAT else repo), None
    if fmt in INTEGER_WEIGHT_FORMATS:
        job.note(fmt, repo=repo)
        return _placeholder(fmt, repo), None
    if fmt in ONLINE_QUANTIZATION:
        job.note("fp8_online", repo=repo)
        return repo, ONLINE_QUANTIZATION[fmt]
    return repo, None


def _trtllm_reads(engine: str, ckpt: Checkpoint) -> bool:
    """TensorRT-LLM reads an HF `fp8` checkpoint only with block scales (load_hf_quant_config: weight_block_size, or
    static activation scales); the others have no condition here."""
    return engine != "trt-llm" or ckpt.method != "fp8" or ckpt.group_size is not None


def _placeholder(fmt: str, repo: str) -> str:
    if repo == UNKNOWN_CHECKPOINT:
        return UNKNOWN_QUANTISED_CHECKPOINT.format(fmt=fmt)
    return QUANTISED_CHECKPOINT.format(fmt=fmt, repo=repo)


def _trtllm_checkpoint(job: _Launch, cfg: ServingConfig, repo: str) -> str:
    """A Model Optimizer checkpoint to make from the 16-bit original, with the note that says how."""
    qformat = TRTLLM_QFORMAT.get(cfg.weight_format)
    if qformat is None:
        return repo
    kv = " --kv_cache_qformat fp8" if cfg.kv_format == "fp8" else ""
    job.note("trtllm_quantise", repo=repo, qformat=qformat, kv=kv)
    return _placeholder(f"{cfg.weight_format} Model Optimizer", repo)


def _length(job: _Launch, served: Served, cfg: ServingConfig, estimate: ServingEstimate) -> int | None:
    """The longest request the replica accepts: the stated length, else the model's context capped at what one
    replica's KV cache holds for one sequence (under DP attention one rank's); None (the engine's own) when no
    context is known."""
    flag = FLAG[job.engine]
    if cfg.max_model_len is not None:
        return cfg.max_model_len
    cache = estimate.sequence_kv_tokens
    if served.context is None:
        job.note("length_unknown", flag=flag, cache=cache)
        return None
    if 0 < cache < served.context:
        job.note("length_cache", flag=flag, length=cache, context=served.context)
        return cache
    job.note("length_context", flag=flag, length=served.context)
    return served.context


def _command(
    job: _Launch, cfg: ServingConfig, model: str, quantization: str | None, length: int | None, seqs: int
) -> str:
    if job.engine == "sglang":
        return " ".join(_sglang(job, cfg, model, quantization, length, seqs))
    if job.engine == "trt-llm":
        return " ".join(_trtllm(job, cfg, model, length, seqs))
    return " ".join(_vllm(job, cfg, model, quantization, length, seqs))


def _vllm(
    job: _Launch, cfg: ServingConfig, model: str, quantization: str | None, length: int | None, seqs: int
) -> list[str]:
    fraction = cfg.gpu_memory_utilization or ENGINE_DEFAULTS["vllm"].memory_fraction
    parts = ["vllm serve", model, f"--tensor-parallel-size {job.tp}"]
    if cfg.dp_attention:  # one engine per GPU, attention data-parallel, the experts split over all (EP)
        parts = ["vllm serve", model, "--tensor-parallel-size 1", f"--data-parallel-size {job.tp}"]
        parts.append("--enable-expert-parallel")
        # --max-num-seqs is each data-parallel engine's: every DP rank runs its own engine core and scheduler
        # (vllm-project/vllm@624b7aff3e99 docs/serving/data_parallel_deployment.md), whose cap on running requests
        # is max_num_seqs itself (@b4622cf924bc vllm/v1/core/sched/scheduler.py Scheduler.__init__
        # `max_num_running_reqs = scheduler_config.max_num_seqs`): the replica's sequences ÷ its ranks, rounded up
        seqs = job.rank_seqs = math.ceil(seqs / job.tp)
    if job.pp > 1:
        parts.append(f"--pipeline-parallel-size {job.pp}")
    if job.nodes > 1:
        parts.append("--distributed-executor-backend ray")
    parts += [f"--max-model-len {length}"] if length is not None else []
    parts += [f"--gpu-memory-utilization {fraction:g}", f"--max-num-seqs {seqs}"]
    parts += [f"--max-num-batched-tokens {job.token_budget}"] if job.token_budget else []
    if cfg.kv_format == "fp8":
        parts.append("--kv-cache-dtype fp8")
    return parts + ([f"--quantization {quantization}"] if quantization else [])


def _sglang(
    job: _Launch, cfg: ServingConfig, model: str, quantization: str | None, length: int | None, seqs: int
) -> list[str]:
    fraction = cfg.gpu_memory_utilization or sglang_memory_fraction(job.tp)
    parts = ["python -m sglang.launch_server", f"--model-path {model}", f"--tp-size {job.tp}"]
    if cfg.dp_attention:  # attention data-parallel over the tp ranks, the experts split over them (DeepEP all-to-all)
        parts += [f"--dp-size {job.tp}", "--enable-dp-attention", f"--ep-size {job.tp}", "--moe-a2a-backend deepep"]
        # the dense (non-MoE) layers on each rank alone, no TP all-reduce, as the step model runs them: ServerArgs
        # .moe_dense_tp_size (sgl-project/sglang@001067fffe33 python/sglang/srt/server_args.py, default None = the
        # dense MLP sharded over all --tp-size ranks; 1 and None the only values it takes)
        parts.append("--moe-dense-tp-size 1")
        # --max-running-requests is the server's, each DP rank taking max_running_requests // dp_size
        # (sgl-project/sglang@003fca802738 python/sglang/srt/mem_cache/kv_cache_configurator.py
        # KVCacheConfigurator.resolve_max_num_reqs, `max_num_reqs // self.ps.attn_dp_size`; earlier releases the same
        # in managers/tp_worker.py, sglang issue 10868): the ranks times each rank's share, so no rank gets fewer
        # than the replica's sequences ÷ its ranks (fewer than dp_size would leave every rank none)
        job.rank_seqs = math.ceil(seqs / job.tp)
        seqs = job.rank_seqs * job.tp
    if job.pp > 1:
        parts.append(f"--pp-size {job.pp}")
    if job.nodes > 1:
        parts += [f"--nnodes {job.nodes}", f"--node-rank {NODE_RANK}", f"--dist-init-addr {HEAD}:{SGLANG_DIST_PORT}"]
    parts += [f"--context-length {length}"] if length is not None else []
    parts += [f"--mem-fraction-static {fraction:g}", f"--max-running-requests {seqs}"]
    if job.token_budget:
        # under DP attention SGLang divides --chunked-prefill-size by --dp-size (sgl-project/sglang
        # python/sglang/srt/server_args.py: "DP attention is enabled. The chunked prefill size is adjusted to"
        # chunked_prefill_size // dp_size), and each rank's scheduler runs the budget the estimate simulated per rank
        ranks = job.tp if cfg.dp_attention else 1
        parts.append(f"--chunked-prefill-size {job.token_budget * ranks}")
    if cfg.kv_format == "fp8":
        parts.append("--kv-cache-dtype fp8_e5m2")
    if quantization:
        parts.append(f"--quantization {quantization}")
    return parts + ["--host 0.0.0.0"]


def _trtllm(job: _Launch, cfg: ServingConfig, model: str, length: int | None, seqs: int) -> list[str]:
    fraction = cfg.gpu_memory_utilization or ENGINE_DEFAULTS["trt-llm"].memory_fraction
    # the PyTorch backend reads Hugging Face and Model Optimizer checkpoints directly: serve.py's default at the commit
    # the flags were read from, said explicitly for older releases whose default built a TensorRT engine first
    parts = [f"trtllm-serve {model}", "--backend pytorch", f"--tp_size {job.tp}"]
    parts += [f"--pp_size {job.pp}"] if job.pp > 1 else []
    parts += [f"--max_seq_len {length}"] if length is not None else []
    parts += [f"--max_batch_size {seqs}", f"--kv_cache_free_gpu_memory_fraction {fraction:g}", "--host 0.0.0.0"]
    parts += [f"--max_num_tokens {job.token_budget}"] if job.token_budget else []
    if cfg.kv_format == "fp8":
        parts.append(f"--extra_llm_api_options {TRTLLM_KV_OPTIONS}")
        job.note("trtllm_kv", options=TRTLLM_KV_OPTIONS)
    if job.nodes > 1:
        hosts = ",".join(f"<server-{i + 1}>:{job.per_node}" for i in range(job.nodes))
        parts = [f"mpirun -H {hosts} -np {job.tp * job.pp} trtllm-llmapi-launch", *parts]
        job.note("trtllm_srun", nodes=job.nodes, per_node=job.per_node)
    return parts


def _levers(job: _Launch, cfg: ServingConfig, repo: str) -> list[str]:
    """The flags of the prefix cache and speculative decoding, and the notes that say what they assume. Flags are the
    engines' own (tests/planner/data/serving_engine_flags.json): vLLM's --enable-prefix-caching and
    --speculative-config (vllm/engine/arg_utils.py; the JSON's keys are SpeculativeConfig's in
    vllm/config/speculative.py); SGLang's --speculative-* fields of ServerArgs (python/sglang/srt/server_args.py);
    TensorRT-LLM's speculative_config in the LLM API options (DecodingBaseConfig max_draft_len,
    speculative_model_dir; MTPDecodingConfig num_nextn_predict_layers: tensorrt_llm/llmapi/llm_args.py)."""
    parts: list[str] = []
    if cfg.prefix_cache_hit_rate > 0:
        if job.engine == "vllm":
            parts.append("--enable-prefix-caching")  # on by default in V1; said for the releases before it
        job.note(f"prefix_{job.engine}", rate=cfg.prefix_cache_hit_rate)
    spec = cfg.speculative
    if spec is None:
        return parts
    k = spec.num_speculative_tokens
    name = ENGINE_SPECULATION[job.engine][spec.method]
    draft = spec.draft_repo or (_draft_head(repo) if spec.method == "eagle3" else None)
    job.note("speculative", method=spec.method, k=k, accept=spec.acceptance_rate, tokens=round(spec.tokens_per_step, 4))
    if spec.method == "eagle3":
        job.note("draft_head", draft=draft, repo=repo)
    if job.engine == "vllm":
        config = f'"method": "{name}", ' + (f'"model": "{draft}", ' if draft else "") + f'"num_speculative_tokens": {k}'
        return [*parts, f"--speculative-config '{{{config}}}'"]
    if job.engine == "sglang":
        parts.append(f"--speculative-algorithm {name}")
        if draft:
            parts.append(f"--speculative-draft-model-path {draft}")
        if spec.method != "ngram":  # a chain: one draft per step (topk 1), k steps, k + 1 tokens verified
            parts += [f"--speculative-num-steps {k}", "--speculative-eagle-topk 1"]
        return [*parts, f"--speculative-num-draft-tokens {k + 1}"]
    fields = [f"decoding_type: {name}"]
    fields.append(f"num_nextn_predict_layers: {k}" if spec.method == "mtp" else f"max_draft_len: {k}")
    if draft:
        fields.append(f"speculative_model_dir: {draft}")
    job.note("trtllm_speculative", options=TRTLLM_KV_OPTIONS, config="{" + ", ".join(fields) + "}")
    if cfg.kv_format != "fp8":  # the FP8 KV cache already names the options file
        parts.append(f"--extra_llm_api_options {TRTLLM_KV_OPTIONS}")
    return parts


def _draft_head(repo: str) -> str:
    return UNKNOWN_DRAFT_HEAD if repo == UNKNOWN_CHECKPOINT else DRAFT_HEAD.format(repo=repo)


def _layout(job: _Launch, config: Configuration, replicas: int, fabric: str | None) -> dict[str, Any]:
    """How the replicas, and a replica's servers, are started: its code and parameters (app/text/messages.py)."""
    if job.nodes > 1:
        params = {
            "replicas": replicas,
            "nodes": job.nodes,
            "tp": job.tp,
            "pp": job.pp,
            "fabric": fabric or "the SKU's network",
            "last": job.nodes - 1,
            "ranks": job.tp * job.pp,
        }
        return {"code": f"layout_{job.engine}" + ("" if job.pp > 1 else "_tp"), "params": params}
    gpus = job.tp * job.pp
    per_node = config.cards_per_node // gpus if config.cards_per_node >= gpus else 0
    return {"code": "layout_replicas", "params": {"replicas": replicas, "gpus": gpus, "per_node": per_node}}


def _dp_layout(job: _Launch, model: ModelSpec, replicas: int, fabric: str | None) -> dict[str, Any]:
    """How a DP-attention replica runs (review R3-5, R3-15: it was worded as one TP group with its all-reduces): its
    ranks, each with its own KV cache and scheduler, the routed experts split over them and the all-to-all between
    them, over NVLink in a server and the fabric across servers; SGLang over several servers, vLLM on one."""
    params = {
        "replicas": replicas, "gpus": job.tp, "ranks": job.tp, "nodes": job.nodes, "experts": model.experts,
        "per_rank": model.experts // job.tp, "rank_seqs": job.rank_seqs,
    }  # fmt: skip
    if job.nodes > 1:
        return {
            "code": f"layout_{job.engine}_ep_nodes",
            "params": params | {"fabric": fabric or "the SKU's network", "last": job.nodes - 1},
        }
    return {"code": f"layout_{job.engine}_ep", "params": params}


# Disaggregated prefill/decode (app/planner/serving_disagg.py). Each pool's replicas run the single-server command
# plus what the engine's disaggregation needs, and a router pairs them, listening where the load balancer would:
# - SGLang PD: --disaggregation-mode (prefill | decode) and the KV transfer backend (server_args.py
#   `disaggregation_transfer_backend`, default mooncake); the router is sgl-router's `launch_router
#   --pd-disaggregation --prefill URL --decode URL`.
# - vLLM with a KV connector: --kv-transfer-config (vllm/engine/arg_utils.py) holding KVTransferConfig's kv_connector
#   and kv_role (vllm/config/kv_transfer.py: kv_producer | kv_consumer | kv_both) for NixlConnector, which moves the
#   KV over UCX (RDMA where the fabric is); each server names itself in VLLM_NIXL_SIDE_CHANNEL_HOST for the
#   handshake, and the proxy of vLLM's NixlConnector guide pairs them (docs/features/nixl_connector_usage.md; its
#   argparse: tests/v1/kv_connector/nixl_integration/toy_proxy_server.py --host --port --prefiller-hosts
#   --prefiller-ports --decoder-hosts --decoder-ports).
# - TensorRT-LLM: context and generation servers are plain `trtllm-serve` commands whose LLM API options YAML carries
#   `cache_transceiver_config` (tensorrt_llm/llmapi/llm_args.py CacheTransceiverConfig: backend DEFAULT | UCX | NIXL
#   | MOONCAKE | MPI in current releases) and, on the context servers, `disable_overlap_scheduler: true`;
#   `trtllm-serve disaggregated -c disagg_config.yaml` (tensorrt_llm/commands/serve.py `disaggregated`,
#   -c/--config_file) reads their URLs from the config's context_servers / generation_servers (num_instances, urls)
#   and serves the OpenAI API (examples/disaggregated/README.md).
DISAGGREGATION_BACKEND = "mooncake"
SGLANG_PORT = 30000  # ServerArgs.port default
# Replicas of a pool sharing a server each take the next port (and bootstrap/side-channel port) up from these, and
# CUDA_VISIBLE_DEVICES pins each to its own GPUs (vLLM's NixlConnector guide runs its instances so on one host).
SGLANG_BOOTSTRAP_PORT = 8998  # ServerArgs.disaggregation_bootstrap_port default: a prefill replica's KV bootstrap
ROUTER = "python -m sglang_router.launch_router --pd-disaggregation"
VLLM_CONNECTOR = "NixlConnector"
VLLM_ROLES = {"prefill": "kv_producer", "decode": "kv_consumer"}
VLLM_PORT = 8000  # vllm serve --port default (vllm/entrypoints/openai/cli_args.py FrontendArgs.port)
# VLLM_NIXL_SIDE_CHANNEL_PORT default; unique per instance on a host (docs/features/nixl_connector_usage.md)
VLLM_SIDE_CHANNEL_PORT = 5600
VLLM_PROXY = "python tests/v1/kv_connector/nixl_integration/toy_proxy_server.py"
TRTLLM_PORT = 8000  # trtllm-serve --port default
TRTLLM_DISAGG_CONFIG = "disagg_config.yaml"
PORTS = {"sglang": SGLANG_PORT, "vllm": VLLM_PORT, "trt-llm": TRTLLM_PORT}
TRTLLM_ROUTER = f"trtllm-serve disaggregated -c {TRTLLM_DISAGG_CONFIG}"
# The sources of the disaggregation flags and keys beyond the serve commands' own (tests/planner/data/
# serving_engine_flags.json `disaggregation` holds the router flags read from them).
DISAGGREGATION_VERSIONS: dict[str, dict[str, str]] = {
    "sglang": {  # --disaggregation-* are ServerArgs fields, read at the commit ENGINE_VERSIONS names
        "sglang-router": "sgl-project/sglang@e46dcd87adca sgl-router/py_src/sglang_router/router_args.py "
        "(--prefill URL BOOTSTRAP_PORT, --decode URL)"
    },
    "vllm": {
        "vllm-kv-connector": "vllm-project/vllm@007c643b4abb vllm/config/kv_transfer.py (KVTransferConfig); "
        "@026c83f974fc docs/features/nixl_connector_usage.md; "
        "@030ea52effcb tests/v1/kv_connector/nixl_integration/toy_proxy_server.py (the proxy's flags)"
    },
    "trt-llm": {
        "trt-llm-disaggregated": "NVIDIA/TensorRT-LLM@4c05a74891e4 tensorrt_llm/commands/serve.py (disaggregated -c); "
        "@013971245ed5 examples/disaggregated/README.md (disagg_config.yaml keys)"
    },
}


def _instances(engine: str, name: str, tp: int, replicas: int, gpus_per_node: int) -> list[dict[str, Any]]:
    """Where each replica of a pool runs: its server (a placeholder), the GPUs it is pinned to, its port, and the
    side ports the engine's KV transfer listens on per instance (SGLang's bootstrap port on a prefill replica,
    vLLM's NIXL side channel), all distinct among the replicas that share a server."""
    slots = max(1, gpus_per_node // tp)
    found = []
    for i in range(replicas):
        server, slot = divmod(i, slots)
        host, port = f"<{name}-server-{server + 1}>", PORTS[engine] + slot
        instance: dict[str, Any] = {
            "pool": name, "server": host, "gpus": ",".join(str(slot * tp + g) for g in range(tp)), "port": port,
        }  # fmt: skip
        if engine == "sglang" and name == "prefill":
            instance["bootstrap_port"] = SGLANG_BOOTSTRAP_PORT + slot
        if engine == "vllm":
            instance["side_channel_port"] = VLLM_SIDE_CHANNEL_PORT + slot
        found.append(instance | {"url": f"http://{host}:{port}"})
    return found


def _pool_command(engine: str, name: str, block: dict[str, Any], instance: dict[str, Any], pinned: bool) -> str:
    """One replica's command on a server of its pool: the single-server command with what the engine's
    disaggregation adds, its own port, and (where replicas share the server) its own GPUs."""
    command = str(block["command"])
    pin = f"CUDA_VISIBLE_DEVICES={instance['gpus']} " if pinned else ""
    port = f"--port {instance['port']}"
    if engine == "sglang":
        bootstrap = (
            f" --disaggregation-bootstrap-port {instance['bootstrap_port']}" if "bootstrap_port" in instance else ""
        )
        return (
            f"{pin}{command} {port} --disaggregation-mode {name} "
            f"--disaggregation-transfer-backend {DISAGGREGATION_BACKEND}{bootstrap}"
        )
    if engine == "vllm":
        config = f'{{"kv_connector": "{VLLM_CONNECTOR}", "kv_role": "{VLLM_ROLES[name]}"}}'
        side = f"VLLM_NIXL_SIDE_CHANNEL_HOST=<this server> VLLM_NIXL_SIDE_CHANNEL_PORT={instance['side_channel_port']}"
        return f"{side} {pin}{command} {port} --kv-transfer-config '{config}'"
    if f"--extra_llm_api_options {TRTLLM_KV_OPTIONS}" in command:
        return f"{pin}{command} {port}"
    return f"{pin}{command} {port} --extra_llm_api_options {TRTLLM_KV_OPTIONS}"


def _router(engine: str, instances: dict[str, list[dict[str, Any]]]) -> str:
    """The router's command, naming every replica of both pools by its server and port."""
    prefill, decode = instances["prefill"], instances["decode"]
    if engine == "sglang":
        urls = [f"--prefill {i['url']} {i['bootstrap_port']}" for i in prefill] + [
            f"--decode {i['url']}" for i in decode
        ]
        return " ".join([ROUTER, *urls, "--host 0.0.0.0 --port 8000"])
    if engine == "vllm":

        def listed(flag: str, pool: list[dict[str, Any]], key: str) -> str:
            return " ".join([flag, *(str(i[key]) for i in pool)])

        return " ".join(
            [
                f"{VLLM_PROXY} --host 0.0.0.0 --port 8000",
                listed("--prefiller-hosts", prefill, "server"),
                listed("--prefiller-ports", prefill, "port"),
                listed("--decoder-hosts", decode, "server"),
                listed("--decoder-ports", decode, "port"),
            ]
        )
    return TRTLLM_ROUTER


def disaggregated_launch(
    model: ModelSpec,
    cfgs: tuple[ServingConfig, ServingConfig],
    shapes: dict[str, tuple[int, int]],
    estimates: tuple[ServingEstimate, ServingEstimate],
    served: Served,
    offer: Any,
) -> dict[str, Any]:
    """The launch of a disaggregated deployment: each pool's command, the router's, and how they are laid out."""
    one = Configuration(offer.gpus_per_node, 1)
    engine = cfgs[1].engine
    blocks = {}
    for (name, (tp, replicas)), cfg, estimate in zip(shapes.items(), cfgs, estimates, strict=True):
        if (
            name == "decode"
        ):  # every prompt arrives computed: the decode pool's cache hit is the transfer's, not a lever
            cfg = replace(cfg, prefix_cache_hit_rate=0.0)
        blocks[name] = launch_block(model, cfg, (tp, 1, replicas), one, estimate, estimate.max_concurrency, served)
    instances = {
        name: _instances(engine, name, tp, replicas, offer.gpus_per_node) for name, (tp, replicas) in shapes.items()
    }
    commands = {}
    for name, block in blocks.items():
        pinned = len({i["server"] for i in instances[name]}) < len(instances[name])  # replicas share a server
        first = [i for i in instances[name] if i["server"] == instances[name][0]["server"]]
        commands[name] = "\n".join(_pool_command(engine, name, block, i, pinned) for i in first)
    commands["router"] = _router(engine, instances)
    (tp_p, r_p), (tp_d, r_d) = shapes["prefill"], shapes["decode"]
    params = {
        "prefill_replicas": r_p, "prefill_tp": tp_p, "decode_replicas": r_d, "decode_tp": tp_d,
        "fabric": offer.inter_node_fabric or "the SKU's network",
    }  # fmt: skip
    layout: dict[str, Any] = {
        "code": "layout_disaggregated" if engine == "sglang" else f"layout_disaggregated_{engine}",
        "params": params,
    }
    texts = [t for block in blocks.values() for t in block["texts"]["notes"] if t["code"] != "no_fabric"]
    for name, pool in instances.items():
        per_server = sum(1 for i in pool if i["server"] == pool[0]["server"])
        if per_server > 1:
            texts.append({"code": f"shared_servers_{name}", "params": {"per_server": per_server}})
    if engine == "trt-llm":
        texts.append(
            {"code": "trtllm_disaggregated", "params": {"options": TRTLLM_KV_OPTIONS, "config": TRTLLM_DISAGG_CONFIG}}
        )
    if engine == "vllm":  # the proxy of vLLM's guide is a test-tree example, not a production router
        texts.append({"code": "vllm_toy_proxy", "params": {"proxy": VLLM_PROXY.removeprefix("python ")}})
    unique = [t for i, t in enumerate(texts) if t not in texts[:i]]
    return {
        "engine": engine,
        "command": "\n".join(commands[name] for name in ("prefill", "decode", "router")),
        "commands": commands,
        "replicas": r_p + r_d,
        "gpus_per_replica": None,  # the pools' differ: `pools`
        "servers_per_replica": 1,
        "pools": {
            name: {
                "replicas": replicas,
                "gpus_per_replica": tp,
                "servers": len({i["server"] for i in instances[name]}),
            }
            for name, (tp, replicas) in shapes.items()
        },  # fmt: skip
        "instances": [*instances["prefill"], *instances["decode"]],
        "max_model_len": blocks["decode"]["max_model_len"],
        "layout": launch_text(layout["code"], layout["params"]),
        "needs_infiniband": True,
        "versions": {engine: ENGINE_VERSIONS[engine], **DISAGGREGATION_VERSIONS[engine]},
        "notes": [launch_text(t["code"], t["params"]) for t in unique],
        "texts": {"layout": layout, "notes": unique},
    }
