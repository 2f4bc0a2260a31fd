"""The Python package against the `spplan` command: the same inputs give the same dicts (the
same numbers, keys and messages), every function runs, and bad input is a ValueError carrying
the command's one-line message. SPPLAN_CLI names the built command (ctest passes it)."""

import json
import os
import subprocess
import tomllib
import warnings

import pytest

import spplan

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("SPPLAN_CLI", os.path.join(REPO, "build", "spplan"))
PLAN_FILE = os.path.join(REPO, "configs", "plans", "qwen3-4b-128k-4xh100.toml")
QWEN = dict(model="qwen3-4b", gpu="h100-80gb", gpus=4)


def cli(*args):
    """(exit code, stdout, stderr) of the built command, with the source tree's presets."""
    if not os.access(CLI, os.X_OK):
        pytest.skip(f"no spplan command at {CLI} to compare with")
    env = dict(os.environ, SPPLAN_CONFIG_DIR=os.path.join(REPO, "configs"))
    r = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, env=env, check=False)
    return r.returncode, r.stdout, r.stderr


def cli_json(*args):
    code, out, err = cli(*args, "--json")
    assert code in (0, 1), err
    return json.loads(out)


@pytest.mark.parametrize("function, command, flags, args", [
    (spplan.estimate, "estimate", dict(QWEN, seq="128k", sp=4, tiled_mlp=True, zero=3),
     ["--model", "qwen3-4b", "--gpu", "h100-80gb", "--gpus", "4", "--seq", "128k", "--sp", "4", "--tiled-mlp",
      "--zero", "3"]),
    (spplan.plan, "plan", dict(QWEN, seq=131072, top=3, trainer="hf"),
     ["--model", "qwen3-4b", "--gpu", "h100-80gb", "--gpus", "4", "--seq", "131072", "--top", "3", "--trainer", "hf"]),
    (spplan.fit, "fit", dict(QWEN, seq="512k"),
     ["--model", "qwen3-4b", "--gpu", "h100-80gb", "--gpus", "4", "--seq", "512k"]),
    (spplan.max_seq, "max-seq", dict(QWEN, sp=4, granularity="8k"),
     ["--model", "qwen3-4b", "--gpu", "h100-80gb", "--gpus", "4", "--sp", "4", "--granularity", "8k"]),
    (spplan.max_seq, "max-seq", dict(QWEN, sp=4, attention="flash3", conservative=True),
     ["--model", "qwen3-4b", "--gpu", "h100-80gb", "--gpus", "4", "--sp", "4", "--attention", "flash3",
      "--conservative"]),
    (spplan.sweep, "sweep", dict(QWEN, seq_from="32k", seq_to="64k"),
     ["--model", "qwen3-4b", "--gpu", "h100-80gb", "--gpus", "4", "--seq-from", "32k", "--seq-to", "64k"]),
    (spplan.simulate, "simulate", dict(plan=PLAN_FILE, events=5), ["--plan", PLAN_FILE, "--events", "5"]),
    (spplan.rent, "rent", dict(model="qwen3-0.6b", seq="16k", zero=2),
     ["--model", "qwen3-0.6b", "--seq", "16k", "--zero", "2"]),
])
def test_same_dict_as_the_command(function, command, flags, args):
    assert function(**flags) == cli_json(command, *args)


def test_safe_plans_rank_first_unless_risky():
    # llama-3.1-8b on 2 x 6 H100s at 128K: the fastest plan leaves 0.4% free against a 14.8% error.
    case = dict(model="llama-3.1-8b", gpu="h100-80gb", gpus=12, gpus_per_node=6, seq="128k", top=1)
    safe, risky = spplan.plan(**case), spplan.plan(**case, risky=True)
    assert safe["plans"][0]["group"] == "safe"
    assert safe["plans"][0]["verdict"]["verdict"] == "fits"
    assert safe["safety"]["fastest_risky"]["margin_pct"] < 1
    assert risky["plans"][0]["group"] == "risky"
    assert risky["plans"][0]["verdict"]["verdict"] == "fits_inside_error"
    assert spplan.fit(**{k: v for k, v in case.items() if k != "top"})["best"]["group"] == "safe"


def test_global_batch_holds_for_every_plan():
    plans = spplan.plan(model="llama-3.1-8b", gpu="h100-80gb", gpus=8, seq="128k", top=10, global_batch=16)["plans"]
    assert plans and all(p["global_batch"] == 16 for p in plans)
    assert all(p["knobs"]["grad_accum_steps"] == 1 for p in spplan.plan(**QWEN, seq="128k", top=10)["plans"])


def test_fit_that_does_not_fit_is_a_dict_not_an_error():
    result = spplan.fit(model="llama-3.1-70b", gpu="a100-40gb", gpus=1, seq="1M")
    assert result["fits"] is False
    assert result == cli_json("fit", "--model", "llama-3.1-70b", "--gpu", "a100-40gb", "--gpus", "1", "--seq", "1M")


def test_export_is_the_commands_text(tmp_path):
    for fmt in ("deepspeed", "arctic"):  # the plan's trainer (arctic, the default) and its formats
        code, out, _ = cli("export", "--plan", PLAN_FILE, "--format", fmt)
        assert code == 0
        assert spplan.export(plan=PLAN_FILE, format=fmt) == out
    code, _, err = cli("export", "--plan", PLAN_FILE, "--format", "torchrun")
    assert code == 2 and 'is not launched by --format torchrun' in err
    with pytest.raises(ValueError, match="is not launched by --format torchrun"):
        spplan.export(plan=PLAN_FILE, format="torchrun")
    target = tmp_path / "ds.json"
    assert spplan.export(plan=PLAN_FILE, format="deepspeed", out=target) == ""
    assert json.loads(target.read_text())["zero_optimization"]["stage"] == 3


@pytest.mark.parametrize("function, flags, args", [
    (spplan.estimate, dict(QWEN, seq="128k", sp=3), ["estimate", "--model", "qwen3-4b", "--gpu", "h100-80gb",
                                                     "--gpus", "4", "--seq", "128k", "--sp", "3"]),
    (spplan.estimate, dict(QWEN, seq="128k"), ["estimate", "--model", "qwen3-4b", "--gpu", "h100-80gb", "--gpus", "4",
                                               "--seq", "128k"]),
    (spplan.plan, dict(QWEN, seq="12q"), ["plan", "--model", "qwen3-4b", "--gpu", "h100-80gb", "--gpus", "4",
                                          "--seq", "12q"]),
    (spplan.plan, dict(QWEN, seq="8k", zero=7), ["plan", "--model", "qwen3-4b", "--gpu", "h100-80gb", "--gpus", "4",
                                                 "--seq", "8k", "--zero", "7"]),
    (spplan.fit, dict(QWEN, seq="8k", bogus_flag=1), ["fit", "--model", "qwen3-4b", "--gpu", "h100-80gb", "--gpus", "4",
                                                      "--seq", "8k", "--bogus-flag", "1"]),
    (spplan.max_seq, dict(model="no-such-model", gpu="h100-80gb", gpus=4), ["max-seq", "--model", "no-such-model",
                                                                            "--gpu", "h100-80gb", "--gpus", "4"]),
    (spplan.sweep, dict(QWEN, seq_from="64k", seq_to="8k"), ["sweep", "--model", "qwen3-4b", "--gpu", "h100-80gb",
                                                             "--gpus", "4", "--seq-from", "64k", "--seq-to", "8k"]),
    (spplan.simulate, dict(plan="/no/such/plan.toml"), ["simulate", "--plan", "/no/such/plan.toml"]),
    (spplan.export, dict(plan=PLAN_FILE, format="yaml"), ["export", "--plan", PLAN_FILE, "--format", "yaml"]),
    (spplan.rent, dict(model="qwen3-4b", seq="8k", sp=2), ["rent", "--model", "qwen3-4b", "--seq", "8k", "--sp", "2"]),
])
def test_bad_input_is_a_value_error_with_the_commands_line(function, flags, args):
    code, _, err = cli(*args)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("spplan: ")
    with pytest.raises(ValueError) as raised:
        function(**flags)
    assert str(raised.value) == err[len("spplan: "):].rstrip("\n")


def test_keyword_values_of_the_wrong_kind_are_refused_with_the_flag():
    with pytest.raises(ValueError, match=r"^--tiled-mlp: value 'yes' is not allowed \(allowed: True or False\)$"):
        spplan.estimate(**QWEN, seq="8k", sp=1, tiled_mlp="yes")
    with pytest.raises(ValueError, match=r"^--zero: value True is not allowed \(allowed: 0, 1, 2, 3\)$"):
        spplan.estimate(**QWEN, seq="8k", sp=1, zero=True)
    # False and None leave a flag out, as not writing it does.
    assert spplan.estimate(**QWEN, seq="8k", sp=1, tiled_mlp=False, zero=None) == spplan.estimate(**QWEN, seq="8k", sp=1)


def test_freeze_encoders_true_and_false_are_the_two_switches():
    gemma3 = os.path.join(REPO, "tests", "planner", "config", "data", "gemma3_4b_multimodal.json")
    flags = dict(model=gemma3, gpu="h100-80gb", gpus=8, seq="32k", sp=2, zero=3, trainer="hf")
    assert spplan.estimate(**flags)["encoders_frozen"] is False
    assert spplan.estimate(**flags, freeze_encoders=True)["encoders_frozen"] is True
    usp = dict(flags, trainer="usp")
    assert spplan.estimate(**usp)["encoders_frozen"] is True  # ms-swift's default
    # The report's model lines, as `spplan estimate` prints them: RoPE, the encoders, the window.
    lines = spplan.estimate(**usp)["priced_model"]
    assert lines[0].startswith("RoPE: linear (factor 8)") and len(lines) == 3
    assert lines[1].startswith("model: the language model of a multimodal config and its vision encoder, 0.42B "
                               "parameters frozen by usp (weights only")
    assert spplan.estimate(**usp, freeze_encoders=False)["encoders_frozen"] is False  # --train-encoders


def preset_keys(name):
    with open(os.path.join(REPO, "configs", "models", name + ".toml"), "rb") as f:
        return tomllib.load(f)


def without_model_name(result):
    return {k: v for k, v in result.items() if k != "model"}


def test_model_as_a_dict_prices_as_the_preset():
    keys = preset_keys("qwen3-4b")
    by_dict = spplan.estimate(model=keys, gpu="h100-80gb", gpus=4, seq="64k", sp=4)
    assert by_dict["model"] == "qwen3-4b"  # named as its "name" says, not after a temporary file
    assert without_model_name(by_dict) == without_model_name(spplan.estimate(**QWEN, seq="64k", sp=4))


def test_model_as_a_transformers_config_prices_as_the_preset():
    transformers = pytest.importorskip("transformers")
    keys = preset_keys("qwen3-4b")
    config = transformers.Qwen3Config(**{k: v for k, v in keys.items() if k not in ("name", "model_type")})
    by_config = spplan.plan(model=config, gpu="h100-80gb", gpus=4, seq="128k", top=2)
    by_preset = spplan.plan(**QWEN, seq="128k", top=2)
    assert [without_model_name(p) for p in by_config["plans"]] == [without_model_name(p) for p in by_preset["plans"]]


def test_model_as_a_hugging_face_folder_is_its_config_json(tmp_path):
    # The cache's layout: the folder names the model, the snapshot's hash does not.
    snapshot = tmp_path / "hub" / "models--Qwen--Qwen3-4B" / "snapshots" / ("0123456789abcdef" * 3)[:40]
    snapshot.mkdir(parents=True)
    keys = {k: v for k, v in preset_keys("qwen3-4b").items() if k != "name"}
    (snapshot / "config.json").write_text(json.dumps(keys))
    by_folder = spplan.estimate(model=snapshot, gpu="h100-80gb", gpus=4, seq="64k", sp=4)
    assert by_folder == spplan.estimate(model=str(snapshot / "config.json"), gpu="h100-80gb", gpus=4, seq="64k", sp=4)
    assert by_folder["model"] == "Qwen/Qwen3-4B"
    assert without_model_name(by_folder) == without_model_name(spplan.estimate(**QWEN, seq="64k", sp=4))
    code, out, err = cli("estimate", "--model", snapshot, "--gpu", "h100-80gb", "--gpus", "4", "--seq", "64k", "--sp",
                         "4", "--json")
    assert code == 0, err
    assert json.loads(out) == by_folder
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError) as raised:
        spplan.estimate(model=tmp_path / "empty", gpu="h100-80gb", gpus=4, seq="8k", sp=1)
    assert str(raised.value) == (f"--model: {tmp_path / 'empty'}: a folder without config.json (allowed: a model "
                                 "preset, a model TOML file, a Hugging Face config.json or a folder holding one)")


def test_a_model_dict_is_named_by_its_keys():
    keys = {k: v for k, v in preset_keys("qwen3-4b").items() if k != "name"}
    by_id = spplan.estimate(model=dict(keys, _name_or_path="Qwen/Qwen3-4B"), gpu="h100-80gb", gpus=4, seq="8k", sp=1)
    assert by_id["model"] == "Qwen/Qwen3-4B"
    assert spplan.estimate(model=keys, gpu="h100-80gb", gpus=4, seq="8k", sp=1)["model"] == "unnamed-model"


def test_a_bad_model_dict_is_named_not_its_temporary_file():
    keys = dict(preset_keys("qwen3-4b"), num_key_value_heads=5)
    with pytest.raises(ValueError) as raised:
        spplan.estimate(model=keys, gpu="h100-80gb", gpus=4, seq="8k", sp=1)
    message = str(raised.value)
    assert message.startswith('model (dict): key "num_key_value_heads": value 5 does not divide'), message
    assert "/tmp" not in message and "\n" not in message


def test_gpu_as_a_dict_prices_as_the_preset():
    with open(os.path.join(REPO, "configs", "gpus", "h100-80gb.toml"), "rb") as f:
        keys = tomllib.load(f)
    by_dict = spplan.estimate(model="qwen3-4b", gpu=keys, gpus=4, seq="64k", sp=4)
    by_preset = spplan.estimate(**QWEN, seq="64k", sp=4)
    assert by_dict["tokens_per_s"] == by_preset["tokens_per_s"]
    assert by_dict["memory"] == by_preset["memory"]


def test_stack_configs_give_what_each_stack_takes(tmp_path):
    # A Hugging Face Trainer plan: DeepSpeed's dict and Accelerate's ParallelismConfig with Ulysses on.
    out = tmp_path / "best.toml"
    best = spplan.plan(**QWEN, seq="128k", trainer="hf", cp=1, out=out)["plans"][0]
    configs = spplan.stack_configs(out)
    assert configs["deepspeed"] == json.loads(spplan.export(plan=out, format="deepspeed"))
    assert configs["deepspeed"]["zero_optimization"]["stage"] == best["knobs"]["zero_stage"]
    assert configs["accelerate"]["sp_size"] == best["knobs"]["sp"]
    assert configs["accelerate"]["sp_backend"] == "deepspeed"
    assert configs["accelerate"]["dp_shard_size"] == best["dp"]
    assert configs["accelerate_sp_handler"]["sp_seq_length_is_variable"] is True
    # ArcticTraining's recipe is another trainer's: refused, naming the plan's trainer and its formats.
    assert configs["arctic"] is None
    assert 'value "hf" is not launched by --format arctic' in configs["refused"]["arctic"]
    # An ArcticTraining plan (the default trainer) gives its recipe and DeepSpeed's dict.
    arctic_out = tmp_path / "arctic.toml"
    spplan.plan(**QWEN, seq="128k", out=arctic_out)
    arctic = spplan.stack_configs(arctic_out)
    assert "sequence_parallel_size: %d" % best["knobs"]["sp"] in arctic["arctic"]
    assert list(arctic["refused"]) == ["accelerate", "trl"]
    accelerate = pytest.importorskip("accelerate")
    from accelerate.utils import DeepSpeedSequenceParallelConfig
    parallelism = accelerate.ParallelismConfig(
        **configs["accelerate"], sp_handler=DeepSpeedSequenceParallelConfig(**configs["accelerate_sp_handler"]))
    assert parallelism.sp_size == best["knobs"]["sp"]


def test_stack_configs_of_a_ring_build_accelerates_objects(tmp_path):
    # TRL's 1M-token recipe: a ring on FSDP2. ParallelismConfig takes no cp_comm_strategy (its cp
    # handler does), and FSDP2's settings are the plugin's.
    out = tmp_path / "ring.toml"
    spplan.plan(model="qwen3-8b", gpu="h100-80gb", gpus=8, seq="1M", trainer="trl", sp=1, cp=8, out=out)
    configs = spplan.stack_configs(out)
    assert configs["deepspeed"] is None and configs["accelerate_sp_handler"] is None
    assert configs["accelerate"]["cp_size"] == 8 and "cp_comm_strategy" not in configs["accelerate"]
    accelerate = pytest.importorskip("accelerate")
    from accelerate.utils import FullyShardedDataParallelPlugin, TorchContextParallelConfig
    parallelism = accelerate.ParallelismConfig(
        **configs["accelerate"], cp_handler=TorchContextParallelConfig(**configs["accelerate_cp_handler"]))
    assert parallelism.cp_size == 8 and parallelism.cp_handler.cp_comm_strategy in ("allgather", "alltoall")
    plugin = FullyShardedDataParallelPlugin(**configs["accelerate_fsdp"])
    assert plugin.fsdp_version == 2 and plugin.activation_checkpointing is False  # the Trainer checkpoints
    # TRL's SFTConfig, built by the Python of TRL's venv (scripts/install-deps.sh; it sees this
    # package through the main venv's packages), with TRL's chunked loss and the ring's padding.
    trl_python = os.path.join(os.environ.get("SPPLAN_TOOLS_DIR", os.path.expanduser("~/.cache/spplan/tools")),
                              "trl", "bin", "python")
    if not os.access(trl_python, os.X_OK):
        pytest.skip(f"no TRL venv at {trl_python}")
    code = ("import json, sys, trl\n"
            "c = trl.SFTConfig(output_dir=sys.argv[2], use_cpu=True, **json.loads(sys.argv[1]))\n"
            "print(json.dumps([c.loss_type, c.max_length, c.pad_to_multiple_of, c.gradient_checkpointing_kwargs,"
            " c.model_init_kwargs]))\n")
    built = subprocess.run([trl_python, "-c", code, json.dumps(configs["trl"]), str(tmp_path / "trl_out")],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    with open(out, "rb") as f:
        knobs = tomllib.load(f)["knobs"]
    assert json.loads(built.stdout.splitlines()[-1]) == [
        "chunked_nll" if knobs["tiled_loss"] else "nll", 1048576, 16,
        {"offload": True} if knobs["act_ckpt"] == "offload" else None,
        {"attn_implementation": "sdpa", "dtype": "bfloat16" if knobs["precision"] == "bf16" else "float32"}]


def test_stack_configs_say_which_stack_refuses_a_plan(tmp_path):
    # ArcticTraining's recipe packs samples at micro batch 1: its record refuses micro batch 2, so
    # no arctic plan has it, and the HF Trainer's plan with it is not launched by its format.
    with pytest.raises(ValueError, match="^no format of trainer \"arctic\" launches what the flags ask: --micro-batch: value 2 "
                       "cannot be expressed for --format arctic"):
        spplan.plan(**QWEN, seq="8k", micro_batch=2, cp=1)
    out = tmp_path / "mb2.toml"
    spplan.plan(**QWEN, seq="8k", micro_batch=2, cp=1, trainer="hf", out=out)
    configs = spplan.stack_configs(out)
    assert configs["arctic"] is None
    assert 'value "hf" is not launched by --format arctic' in configs["refused"]["arctic"]
    assert configs["deepspeed"]["train_micro_batch_size_per_gpu"] == 2


CHECK_DATA = os.path.join(os.path.dirname(__file__), "..", "planner", "check", "data")


def test_check_holds_a_run_against_its_plan():
    # Real runs on this CPU (tests/planner/check/make_fixtures.py): the HF Trainer from the accelerate
    # export as planned, and with its parallelism_config dropped (the two ranks data parallel).
    data = lambda *p: os.path.join(CHECK_DATA, *p)
    ok = spplan.check(data("hf_sp2", "plan.toml"), data("hf_sp2", "trainer_state.json"), data("hf_sp2", "deepspeed.log"))
    assert ok["as_planned"] is True
    dropped = spplan.check(data("hf_sp2_dropped", "plan.toml"), data("hf_sp2_dropped", "trainer_state.json"))
    assert dropped["as_planned"] is False
    assert any(f["id"] == "not_split" and f["not_the_plan"] for f in dropped["findings"])
    with pytest.raises(ValueError, match="^check: no run log given"):
        spplan.check(data("hf_sp2", "plan.toml"))
    with pytest.raises(ValueError):  # the command's own one line for a file it cannot read
        spplan.check(data("hf_sp2", "plan.toml"), data("hf_sp2", "no_such_log.json"))


def test_whole_floats_are_whole_numbers_and_json_is_not_a_keyword():
    # gpus=8.0 was once refused where seq=1e9 was taken; json=True leaked "--json: given twice".
    assert spplan.estimate(**dict(QWEN, gpus=4.0), seq=1.31072e5, sp=4.0) == spplan.estimate(**QWEN, seq="128k", sp=4)
    with pytest.raises(ValueError, match=r"^json: not a keyword of spplan.plan \(allowed: leave it out"):
        spplan.plan(**QWEN, seq="8k", json=True)
    with pytest.raises(ValueError, match=r"--gpus: value \"4.5\""):
        spplan.estimate(**dict(QWEN, gpus=4.5), seq="128k", sp=4)


def test_a_plan_that_does_not_fit_warns(tmp_path):
    plan_file = tmp_path / "tight.toml"
    text = open(PLAN_FILE).read().replace('seq_len = 131072', 'seq_len = 16777216')
    assert text != open(PLAN_FILE).read()
    plan_file.write_text(text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spplan.simulate(plan=plan_file, events=1)
        spplan.export(plan=plan_file, format="deepspeed")
        spplan.stack_configs(plan_file)
    fits = [w for w in caught if "does not fit" in str(w.message)]
    assert len(fits) == 3
    # Each points at the line here that called, not at "sys:1" or the package.
    assert all(w.filename == __file__ for w in fits), [(w.filename, w.lineno) for w in fits]


def test_help_version_and_presets_are_the_commands():
    code, out, _ = cli("plan", "--help")
    assert code == 0 and out in spplan.plan.__doc__
    assert "--reduce-bucket" in spplan.estimate.__doc__
    code, out, _ = cli("--version")
    assert out.startswith(f"spplan {spplan.__version__} (commit ")
    assert "qwen3-4b" in spplan.model_presets() and "h100-80gb" in spplan.gpu_presets()


def test_a_model_folder_named_in_latin1_is_read_and_named_with_its_byte_shown(tmp_path):
    # "mod\xe8le" (è in Latin-1) is no UTF-8: Python holds the name with a surrogate (PEP 383), the
    # command's JSON shows the byte as \xe8, and a message quoting the path raises ValueError.
    folder = os.fsdecode(os.path.join(os.fsencode(str(tmp_path)), b"mod\xe8le"))
    os.mkdir(folder)
    keys = {k: v for k, v in preset_keys("qwen3-4b").items() if k != "name"}
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        json.dump(keys, f)
    by_folder = spplan.estimate(model=folder, gpu="h100-80gb", gpus=4, seq="8k", sp=1)
    assert by_folder["model"] == "mod\\xe8le"
    assert without_model_name(by_folder) == without_model_name(spplan.estimate(**QWEN, seq="8k", sp=1))
    with pytest.raises(ValueError) as raised:
        spplan.estimate(model=os.path.join(folder, "missing.toml"), gpu="h100-80gb", gpus=4, seq="8k", sp=1)
    assert "mod\\xe8le" in str(raised.value)


def test_a_corpus_prices_its_epoch_and_searches_the_length(tmp_path):
    lengths = tmp_path / "lengths.csv"
    lengths.write_text("length,count\n2000,900\n30000,100\n")
    at_length = spplan.plan(**QWEN, seq="32k", trainer="usp", lengths=str(lengths), top=1)
    assert at_length == cli_json("plan", "--model", "qwen3-4b", "--gpu", "h100-80gb", "--gpus", "4", "--seq", "32k",
                                 "--trainer", "usp", "--lengths", str(lengths), "--top", "1")
    corpus = at_length["plans"][0]["corpus"]
    assert corpus["real_tokens"] == 4.8e6 and corpus["attention"] == "per document" and corpus["epoch_s"] > 0
    searched = spplan.plan(**QWEN, trainer="usp", lengths=str(lengths), top=1)
    assert [row["seq"] for row in searched["seq_search"] if row["chosen"]] == [searched["seq"]]
    with pytest.raises(ValueError, match="--packing: needs --lengths"):
        spplan.plan(**QWEN, seq="32k", packing="bfd")
