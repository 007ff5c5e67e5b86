"""Resolve a request into the estimator's specs: the model, the workload and, for /estimate, the
cluster it runs on.

Only a SKU on /estimate needs the database; the session is opened lazily through `open_session`,
so an estimate on a built-in GPU type keeps answering when the database is down.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from sqlalchemy.orm import Session

from app.catalog import repository as catalog_repository
from app.catalog.models import Sku
from app.catalog.service import fabric_addon_of, joining_fabric
from app.common.errors import InvalidInput, refused
from app.common.schemas import mirror
from app.estimator.checkpoints import Checkpoint, checkpoint_from_config, scheme_params
from app.estimator.clusters import CatalogServer, HardwareAsked, gpu_cluster, server_cluster
from app.estimator.hardware import get_gpu
from app.estimator.memory import validate_plan
from app.estimator.models import model_from_hf_config, model_from_params, validate_model
from app.estimator.notes import Note, note
from app.estimator.params import count_params
from app.estimator.presets import get_preset, preset_config
from app.estimator.serving import context_limit
from app.estimator.specs import Cluster, EstimatorError, ModelSpec, Plan, Warning_, Workload
from app.planner.explain import task_warnings
from app.planner.schemas import HardwareIn, ModelIn, WorkloadIn
from app.planner.search import default_global_batch
from app.planner.shapes import scaled_pretrain_batch
from app.text import messages

SessionOpener = Callable[[], Session]


def resolve_model(spec: ModelIn) -> tuple[ModelSpec, list[Warning_]]:
    if spec.preset is not None:
        preset = get_preset(spec.preset)
        model = preset.model if spec.variant is None else replace(preset.model, hf_repo=preset.repo_for(spec.variant))
        return model, []
    if spec.hf_config is not None:
        model = _from_pasted_config(spec.hf_config, name=spec.name or spec.hf_id)
        repo = spec.hf_id or spec.hf_config.get("_name_or_path")
        model = replace(model, hf_repo=str(repo)) if repo else model
        return model, validate_model(model, spec.params)
    if spec.hf_id is not None:  # the delivery layer fills hf_config from the Hub first (app.hub)
        raise EstimatorError.of("hub_config_unread", field="model.hf_id", hf_id=spec.hf_id)
    if spec.layers is not None:
        # ModelIn's validator guarantees the rest of an explicit architecture (the asserts narrow types)
        assert spec.hidden is not None and spec.heads is not None and spec.ffn is not None and spec.vocab is not None
        model = ModelSpec(
            name=spec.name or "custom",
            layers=spec.layers,
            hidden=spec.hidden,
            heads=spec.heads,
            kv_heads=spec.kv_heads or spec.heads,
            ffn=spec.ffn,
            vocab=spec.vocab,
            mlp=spec.mlp,
            tied_embeddings=spec.tied_embeddings,
            head_dim=spec.head_dim,
            experts=spec.experts,
            experts_per_token=spec.experts_per_token,
            expert_ffn=spec.expert_ffn,
            shared_experts=spec.shared_experts,
            moe_layers=spec.moe_layers if spec.moe_layers is not None else (spec.layers if spec.experts else 0),
        )
        return model, validate_model(model, spec.params)
    assert spec.params is not None  # ModelIn: without another source, params is required
    model = model_from_params(spec.params, name=spec.name)
    return model, validate_model(model)


# The config.json keys the estimator reads each ModelSpec field from (app/estimator/models.py, its families' key
# aliases; a field no key states, such as kv_heads left to default to heads, falls back on the key it defaulted to).
HF_CONFIG_KEYS: dict[str, tuple[str, ...]] = {
    "layers": ("num_hidden_layers", "n_layer"),
    "hidden": ("hidden_size", "n_embd"),
    "heads": ("num_attention_heads", "n_head"),
    "kv_heads": ("num_key_value_heads", "num_kv_heads", "num_attention_heads", "n_head"),
    "ffn": ("intermediate_size", "n_inner", "ffn_hidden_size"),
    "vocab": ("vocab_size",),
    "head_dim": ("head_dim",),
    "experts": ("num_local_experts", "num_experts", "n_routed_experts"),
    "experts_per_token": ("num_experts_per_tok",),
    "expert_ffn": ("moe_intermediate_size",),
    "moe_layers": ("num_hidden_layers", "n_layer"),
    "tied_embeddings": ("tie_word_embeddings",),
}


def _from_pasted_config(config: Mapping[str, Any], *, name: str | None) -> ModelSpec:
    """The model of a config.json in `model.hf_config`; a shape the estimator refuses is named by the config's key as
    sent (review R7-6: the estimator's checks name the architecture's fields, `model.heads`, which this request does
    not have)."""
    try:
        return model_from_hf_config(config, name=name)
    except EstimatorError as exc:
        field = config_field(exc.field, config)
        if field == exc.field:
            raise
        raise EstimatorError(str(exc), field=field, code=exc.code, params=exc.params) from exc


def config_field(field: str | None, config: Mapping[str, Any]) -> str | None:
    """`model.hf_config.<key>` for an architecture field (`model.heads`) of a model read from `config`: the first key
    of HF_CONFIG_KEYS the config states, else the config as a whole (`model`: its size). A field of the config
    already, or of something else, as it is."""
    if field is None or not (field == "model" or field.startswith("model.")) or field.startswith("model.hf_config"):
        return field
    keys = HF_CONFIG_KEYS.get(field.removeprefix("model."), ())
    stated = next((key for key in keys if config.get(key) is not None), None)
    return "model.hf_config" + (f".{stated}" if stated else "")


def model_config(spec: ModelIn) -> Mapping[str, Any] | None:
    """The config.json values behind the model: the preset's, or the one pasted or read from the Hub."""
    return preset_config(spec.preset, spec.variant) if spec.preset is not None else spec.hf_config


def within_context(request: WorkloadIn) -> Workload:
    """The request's workload, its sequence within the model's context where config.json states one (a preset's, a
    pasted or Hub config's; an explicit architecture states none and is taken as asked).

    A stated seq_len beyond the context is refused (seq_len_context), not warned about. The launch this service
    writes trains at the config's own positions (the Trainer loads the repository's config.json; Megatron-LM gets
    its rotary base and scaling from it, app/planner/launch/megatron_lm.py), so a longer sequence would run positions
    the model never saw, with no RoPE scaling to extend them: quality collapses past the trained length (Peng et al.
    2023, "YaRN", §4: extension needs the scaled RoPE *and* fine-tuning on it). A real context-extension run is a
    different configuration, and the API takes it as one: paste model.hf_config with the rope_scaling that extends
    it (YaRN with its factor), and the context is that config's (context_limit multiplies it), so the run is sized
    and launched with it. A left-out seq_len (default 2048) is sized at the context where that is shorter (GPT-2's
    1,024 learned positions)."""
    workload = request.workload()
    limit = context_limit(model_config(request.model))
    if limit is None or workload.seq_len <= limit:
        return workload
    if "seq_len" in request.model_fields_set:
        raise EstimatorError.of("seq_len_context", field="seq_len", seq_len=workload.seq_len, limit=limit)
    return replace(workload, seq_len=limit)


def resolve_workload(request: WorkloadIn) -> tuple[ModelSpec, Workload, list[Warning_]]:
    """The model and workload of a recommendation, checked against a one-GPU plan (a workload the
    estimator refuses is a 422 before any search)."""
    model, warnings = resolve_model(request.model)
    workload = with_pretrain_batch(model, within_context(request))
    validate_plan(model, workload, Plan(micro_batch=request.micro_batch or 1))
    return model, workload, warnings + checkpoint_warnings(request.model, model) + task_warnings(model, workload)


def with_pretrain_batch(model: ModelSpec, workload: Workload) -> Workload:
    """The workload with the global batch a pre-training job (from scratch or continued) is sized and launched at
    where the request gives none (shapes.scaled_pretrain_batch: it grows with the job's compute); else as it is."""
    counts = count_params(model)
    batch = scaled_pretrain_batch(workload, counts.active - counts.embedding - counts.lm_head)
    return workload if batch is None else replace(workload, global_batch=batch)


def shipped_checkpoint(spec: ModelIn) -> Checkpoint:
    """The checkpoint the request's preset or config.json describes (its quantization_config, if any)."""
    return checkpoint_from_config(model_config(spec))


def checkpoint_warnings(spec: ModelIn, model: ModelSpec) -> list[Warning_]:
    """Training a quantised checkpoint (DeepSeek-V3's block FP8): the estimate sizes 16-bit weights, which the
    repository does not hold, so the launch needs a dequantised copy first."""
    shipped = shipped_checkpoint(spec)
    if not shipped.quantised:
        return []
    params = {"repo": model.hf_repo or model.name, "scheme": shipped.scheme, **scheme_params(shipped)}
    return [Warning_("quantised_checkpoint", params)]


def resolve_cluster(hardware: HardwareIn, open_session: SessionOpener) -> tuple[Cluster, list[Note]]:
    """The cluster a request describes, and what was assumed to complete it: a GPU type with a node count
    means whole usual servers on that GPU's usual fabric; a catalog SKU brings its own node shape, host
    RAM and network (app/estimator/clusters.py). The notes (codes with parameters) go to the response's
    `assumptions` in English and `assumption_codes`."""
    asked = mirror(HardwareAsked, hardware, nodes=hardware.nodes if "nodes" in hardware.model_fields_set else None)
    if hardware.gpu is not None:
        return gpu_cluster(get_gpu(hardware.gpu), asked)
    assert hardware.sku is not None  # HardwareIn: exactly one of gpu and sku
    with open_session() as session:
        sku = _sku_or_422(session, hardware.sku)
        per_node = hardware.gpus_per_node or sku.gpus_per_node
        if sku.rental_unit == "card" and per_node not in sku.card_counts:
            counts = sorted(sku.card_counts)
            field = "hardware.gpus_per_node"
            raise refused(
                InvalidInput, "sku_card_count", field=field, sku=sku.slug, card_counts=counts, per_node=per_node
            )
        if sku.rental_unit == "card" and (asked.nodes or 1) > 1:
            # cards are rented inside one server: several of them are not joined over a fabric (POST /quotes refuses
            # the same quantity), so a multi-server plan on this SKU is nothing the catalog sells
            most, nodes = max(sku.card_counts), asked.nodes
            raise refused(
                InvalidInput, "sku_cards_one_server", field="hardware.nodes", sku=sku.slug, most=most, nodes=nodes
            )
        addons = catalog_repository.addons_for_sku(session, sku.id)
        joined = joining_fabric(sku, addons)
        fabric_addon = fabric_addon_of(sku, addons) if joined else None
        gbps = fabric_addon.server_gbps if fabric_addon is not None else None
        server = mirror(CatalogServer, sku, name=sku.slug, inter_node_fabric=joined, inter_node_gbps=gbps)
        cluster, notes = server_cluster(get_gpu(sku.gpu_type.slug), server, asked)
        if (asked.nodes or 1) > 1 and joined is None:
            notes.append(note("one_server_per_job", sku=sku.slug))
        return cluster, notes


def _sku_or_422(session: Session, sku_id: str) -> Sku:
    """The SKU `hardware.sku` names (a retired one too: an estimate prices nothing). One the catalog does not hold is a
    value the field does not allow, a 422 on it naming the active SKUs, as POST /quotes refuses `sku_id` (review
    R7-5: it was a 404, which this API keeps for a path that names nothing)."""
    sku = catalog_repository.get_sku_by_slug(session, sku_id)
    if sku is None:
        params = {"sku_id": sku_id, "active": [s.slug for s in catalog_repository.list_skus(session)]}
        message = messages.quote_check("sku_unknown", params)
        error = {"field": "hardware.sku", "message": message, "type": "sku_unknown", "params": params}
        raise InvalidInput(f"hardware.sku: {message}", errors=[error])
    return sku


def with_global_batch(workload: Workload, plan_global: int | None, plan: Plan) -> tuple[Workload, list[Warning_]]:
    """The workload with the global batch of a given plan: the plan's, the workload's, or the default /recommend
    sizes every plan at (search.default_global_batch), so a recommended plan estimates to the option's figures. One
    that dp × micro-batch does not divide is rounded to the nearest multiple (never below one), with a warning: the
    frameworks step on whole micro-batches."""
    if workload.task == "inference":
        return workload, []
    step = plan.dp * plan.micro_batch
    global_batch = plan_global or workload.global_batch or default_global_batch(workload)
    warnings = []
    if global_batch % step:
        rounded = max(step, int(global_batch / step + 0.5) * step)
        warnings.append(
            Warning_("global_batch_rounded", {"global_batch": global_batch, "step": step, "rounded": rounded})
        )
        global_batch = rounded
    return replace(workload, global_batch=global_batch), warnings


def as_rented(cluster: Cluster) -> Cluster:
    """The cluster as the search and the quotes see a rentable configuration: the link named, and no
    fabric within one server."""
    multi = cluster.nodes > 1
    return replace(
        cluster,
        intra_node_link=cluster.intra_node_link or cluster.gpu.intra_node_link,
        inter_node_gbps=cluster.inter_node_gbps if multi else None,
        inter_node_fabric=cluster.inter_node_fabric if multi else None,
    )
