"""POST /recommend with memory levers (`plan`: attention, loss, compile, activation_offload, fp8_params): the search
applies them to every option's plan on the stacks that run them (app/planner/levers.py), the option's launch sets
them, and bad values are a 422 naming the field. Before, `plan` on /recommend was a 422 ("Extra inputs are not
permitted")."""

from __future__ import annotations

from fastapi.testclient import TestClient

BODY = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 1e8, "seq_len": 4096}


def _options(client: TestClient, **plan: object) -> list[dict]:
    body = BODY | ({"plan": plan} if plan else {})
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    result = response.json()
    return result["options"] + result["near_misses"]


def test_eager_attention_and_fused_loss_reach_every_option_and_its_launch(client: TestClient) -> None:
    options = _options(client, attention="eager", loss="fused")
    assert options
    for option in options:
        plan = option["plan"]
        assert plan["flash_attention"] is False and plan["loss"] == "fused", plan
        assert plan["attention"] == "eager" and option["quote"]["plan"]["attention"] == "eager"
        stack = option["stack"]
        launch = option["launch"][stack]
        if stack == "deepspeed":  # transformers from_pretrained attn_implementation; TrainingArguments
            assert launch["model"]["attn_implementation"] == "eager"
            assert launch["trainer"]["use_liger_kernel"] is True
        elif stack == "megatron":  # Megatron-LM --attention-backend unfused, native fused cross-entropy
            assert "--attention-backend unfused" in launch["args"]
            assert "--cross-entropy-loss-fusion" in launch["args"]
            assert "--cross-entropy-fusion-impl native" in launch["args"]
        else:  # torchtitan runs neither eager attention nor a fused loss: never chosen for this request
            raise AssertionError(f"{stack} does not run eager attention")


def test_eager_attention_is_sized_on_its_score_matrix(client: TestClient) -> None:
    """A remote-code model that falls back to eager attention, sized as the request says: the same SKU and plan
    shape carry more activation memory a sequence than with flash attention. Both ask for the fused loss: memory relief
    may take it on its own (search.py `relieved`, levers.fused_relief), and the micro-batches the two plans settle on
    differ, so the activations are compared a sequence of the micro-batch."""
    flash = {(o["sku"]["id"], o["total_gpus"]): o for o in _options(client, loss="fused")}
    eager = {(o["sku"]["id"], o["total_gpus"]): o for o in _options(client, attention="eager", loss="fused")}
    both = [key for key in eager if key in flash]
    assert both

    def per_sequence(option: dict) -> float:
        return float(option["memory"]["per_gpu_gib"]["activations"]) / option["plan"]["micro_batch"]

    for key in both:
        assert flash[key]["plan"]["flash_attention"] is True
        assert per_sequence(eager[key]) > per_sequence(flash[key])


def test_the_default_launch_names_flash_attention(client: TestClient) -> None:
    for option in _options(client):
        if option["stack"] == "deepspeed":
            assert option["launch"]["deepspeed"]["model"]["attn_implementation"] == "flash_attention_2"


def test_bad_lever_values_are_a_422_naming_the_field(client: TestClient) -> None:
    cases = [
        ({"attention": "xformers"}, "attention"),
        ({"loss": "liger"}, "loss"),
        ({"dp": 2}, "dp"),
        ({"loss": "compiled"}, "compile"),
        ({"fp8_params": True}, "fp8_params"),
        ({"loss": "chunked"}, "plan.loss"),  # no stack the planner launches runs it
    ]
    for plan, field in cases:
        response = client.post("/recommend", json=BODY | {"plan": plan})
        assert response.status_code == 422, (plan, response.text)
        assert field in response.text, (plan, response.text)


def test_which_stack_runs_which_lever() -> None:
    """app/planner/levers.py: what each stack's launch can set (cited there)."""
    from app.estimator.presets import get_preset
    from app.estimator.specs import Plan
    from app.planner.launch.megatron_lm import _megatron_lever_args
    from app.planner.levers import Levers, runs_levers

    base = Plan(dp=2, zero_stage=3)
    assert not runs_levers("fsdp", Levers(attention="eager").on(base))  # torchtitan: sdpa / flex only
    assert not runs_levers("megatron", Levers(attention="sdpa").on(base))
    assert not runs_levers("megatron", Levers(compiled=True).on(base))  # no torch.compile
    assert not runs_levers("deepspeed", Levers(activation_offload=True).on(base))
    assert runs_levers("deepspeed", Levers(loss="fused", attention="eager").on(base))  # Liger, eager
    assert runs_levers("fsdp", Levers(fp8_params=True).on(base))  # float8 FSDP all-gather, sharded
    assert not runs_levers("fsdp", Levers(fp8_params=True).on(Plan()))
    assert not any(runs_levers(s, Levers(loss="chunked").on(base)) for s in ("deepspeed", "fsdp", "megatron"))
    offload = Levers(activation_offload=True, loss="fused").on(base)
    assert runs_levers("megatron", offload)  # --cpu-offloading: no pipeline, no recompute
    model = get_preset("llama-3.1-8b").model
    assert _megatron_lever_args(model, offload) == [
        "--attention-backend flash",
        "--cross-entropy-loss-fusion",
        "--cross-entropy-fusion-impl native",  # the implementation sized (6 bytes a logit), as Megatron-Bridge's
        "--cpu-offloading",
        f"--cpu-offloading-num-layers {model.layers - 1}",
    ]


def test_levers_no_stack_runs_together_are_a_422_on_plan(client: TestClient) -> None:
    """SDPA attention (the Trainer, torchtitan) and activation offload (Megatron-LM's --cpu-offloading alone): no
    stack runs both, so no SKU can. Before, the answer was an empty recommendation whose SKUs read as memory misses
    ("no parallel plan fits")."""
    response = client.post("/recommend", json=BODY | {"plan": {"attention": "sdpa", "activation_offload": True}})
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert error["field"] == "plan"
    for named in (
        "attention sdpa",
        "activation_offload",
        "attention sdpa: deepspeed/fsdp",
        "activation_offload: megatron",
    ):
        assert named in error["message"], error["message"]


def test_a_sku_the_levers_rule_out_is_rejected_for_them_not_for_memory(client: TestClient) -> None:
    """Activation offload on the by-the-card A100 (host RAM not listed): activations go only to host RAM the plan can
    count on, as offloaded states do. Before, its rejection read "does not fit: ... needs 5.5 GiB per GPU, more than
    the 37.0 GiB left", a memory miss with the need below the limit."""
    response = client.post("/recommend", json=BODY | {"plan": {"activation_offload": True}})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["options"] or body["near_misses"]  # the SKUs whose host RAM is listed run it (Megatron-LM)
    [card] = [r for r in body["rejected"] if r["sku"] == "a100-40g-pcie-card"]
    assert card["code"] == "levers_unsupported", card
    assert card["params"]["levers"] == ["activation_offload"]
    assert card["params"]["runs"] == ["activation_offload: megatron"]
    assert card["params"]["host_ram_unknown"] is True
    assert "host RAM" in card["reason"] and "does not fit" not in card["reason"], card["reason"]


def test_levers_unsupported_names_the_levers_and_their_stacks_in_both_languages() -> None:
    from app.planner.levers import Levers, levers_params
    from app.text import messages

    params = {"gpus": 8, "gpu_name": "NVIDIA H100 80GB SXM5", "nodes": 1}
    params |= levers_params(Levers(attention="eager", compiled=True, loss="compiled"))
    assert params["levers"] == ["attention eager", "loss compiled", "compile"]
    # eager: the Trainer's attn_implementation, Megatron-LM's unfused backend; compile: the Trainer, torchtitan
    assert params["runs"] == [
        "attention eager: deepspeed/megatron",
        "loss compiled: deepspeed/fsdp",
        "compile: deepspeed/fsdp",
    ]
    english = messages.rejection("levers_unsupported", params)
    chinese = messages.rejection("levers_unsupported", params, "zh")
    for text in (english, chinese):
        assert "attention eager" in text and "compile: deepspeed/fsdp" in text and "8 × NVIDIA H100" in text, text
    assert english.startswith("no stack runs the memory levers") and "显存选项" in chinese
    host = messages.rejection("levers_unsupported", params | {"host_ram_unknown": True}, "zh")
    assert "主机内存" in host, host


def test_fp8_weights_are_refused_per_sku_where_the_job_runs_in_16_bits(client: TestClient) -> None:
    # An FP8 full fine-tune with fp8_params: the A100 SKUs (no FP8 math) run it in bf16, so they are rejected as
    # levers_unsupported naming that, and the H100 options keep FP8 weights. Before, the A100s' bf16 run reached
    # validate_plan with FP8 weights and the whole request was a 422 on plan.fp8_params ("got precision bf16").
    body = {"model": {"preset": "llama-3.2-1b"}, "task": "full_finetune", "tokens": 1e8, "precision": "fp8"}
    response = client.post("/recommend", json=body | {"plan": {"fp8_params": True}})
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["options"], result["rejected"]
    assert all(o["plan"]["fp8_params"] is True for o in result["options"])
    refused = [r for r in result["rejected"] if r["code"] == "levers_unsupported"]
    assert refused and all("A100" in r["params"]["gpu_name"] for r in refused), refused
    assert all(r["params"]["runs_as"] == "bf16" and "fp8_params" in r["reason"] for r in refused)
    from app.text import messages

    chinese = messages.rejection("levers_unsupported", refused[0]["params"], "zh")
    assert chinese.startswith("fp8_params 以 FP8 保存训练权重") and "bf16" in chinese, chinese


def test_eager_attention_on_a_megatron_bridge_recipe_sets_the_unfused_backend(client: TestClient) -> None:
    """A Megatron-Bridge recipe's attention backend is auto (a fused kernel that never holds the scores): the launch of
    an option sized with eager attention sets model.attention_backend=unfused (Megatron-Core AttnBackend), as the
    Megatron-LM launch sets --attention-backend unfused. It set nothing, so the job ran flash attention."""
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "full_finetune", "tokens": 1e9, "seq_len": 16384}
    response = client.post("/recommend", json=body | {"plan": {"attention": "eager"}})
    assert response.status_code == 200, response.text
    bridges = [
        o["launch"]["megatron"] for o in response.json()["options"] if "overrides" in o["launch"].get("megatron", {})
    ]
    assert bridges
    for launch in bridges:
        assert "model.attention_backend=unfused" in launch["overrides"]


def test_eager_attention_at_long_context_searches_no_context_parallel_plan(client: TestClient) -> None:
    """No stack runs context parallelism with eager attention (the estimator's cp_eager_attention): the search leaves
    cp > 1 out for it and answers, where one cp shape aborted the whole request with that 422."""
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "full_finetune", "tokens": 1e9, "seq_len": 65536}
    response = client.post("/recommend", json=body | {"plan": {"attention": "eager"}})
    assert response.status_code == 200, response.text
    result = response.json()
    assert all(option["plan"]["cp"] == 1 for option in result["options"] + result["near_misses"])
