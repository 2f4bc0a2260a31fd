"""spplan from Python: the `spplan` command's planner and simulator, in process.

Each function takes the command's flags as keyword arguments (``--tiled-mlp`` is ``tiled_mlp=True``,
``--no-tiled-mlp`` is ``tiled_mlp=False``,
``--seq 128k`` is ``seq="128k"`` or ``seq=131072``) and returns what ``spplan COMMAND --json``
prints, as a dict with the same keys. Bad input raises ``ValueError`` with the command's one-line
message; warnings (a plan that does not fit, a placeholder in an export) go through ``warnings``.
Nothing is computed here: every call runs the C++ command the executable runs (``spplan._spplan``).

A model may be a preset name (``"qwen3-4b"``), a path to a model TOML, a Hugging Face ``config.json``
or a folder holding one, a dict of config.json keys, or a transformers ``PretrainedConfig``. A GPU may be a
preset name, a path to a GPU TOML, or a dict of its keys. ``help(spplan.plan)`` lists every flag
with its meaning, allowed values and default (the same text as ``spplan plan --help``).

    import spplan
    best = spplan.plan(model="qwen3-4b", gpu="h100-80gb", gpus=4, seq="128k", out="best.toml")["plans"][0]
    print(best["knobs"]["sp"], spplan.stack_configs("best.toml")["deepspeed"])
"""

import json
import os
import sys
import tempfile
import warnings

from . import _spplan

__all__ = ["estimate", "plan", "fit", "rent", "max_seq", "sweep", "simulate", "export", "check", "stack_configs",
           "model_presets", "gpu_presets", "trainer_presets"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_spplan.set_configs_dir(os.path.join(_HERE, "configs"))
__version__ = _spplan.version()
__commit__ = _spplan.commit()

_FLAGS = {command: {f["name"]: f for f in _spplan.flags(command)} for command in _spplan.commands()}


def model_presets():
    """The model preset names (``--model NAME``)."""
    return _spplan.model_presets()


def gpu_presets():
    """The GPU preset names (``--gpu NAME``)."""
    return _spplan.gpu_presets()


def trainer_presets():
    """The trainer records (``--trainer NAME``; configs/trainers/README.md): what each stack runs and launches."""
    return _spplan.trainer_presets()


def _is_pretrained_config(value):
    return hasattr(value, "to_dict") and hasattr(value, "model_type")


def _toml_value(key, value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return json.dumps(value)  # a JSON number or string is a TOML one
    raise ValueError(f'--gpu: key "{key}": value {value!r} is not a TOML scalar (allowed: a number, a string, a bool)')


class _Files:
    """The temporary files a call writes (a model dict as config.json, a GPU dict as TOML), and
    the names messages use for them instead of their paths."""

    def __init__(self):
        self._dir = None
        self.names = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._dir is not None:
            self._dir.cleanup()

    def write(self, file_name, text, shown_as, folder="."):
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="spplan-")
        os.makedirs(os.path.join(self._dir.name, folder), exist_ok=True)
        path = os.path.join(self._dir.name, folder, file_name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        self.names[path] = shown_as
        return path

    def shown(self, message):
        for path, name in self.names.items():
            message = message.replace(path, name)
        return message


def _model_arg(value, files):
    if _is_pretrained_config(value):
        value = value.to_dict()
    if isinstance(value, dict):
        # A config.json's keys: the C++ loader reads them as it reads the file (defaults per family)
        # and names the model by their "name" or "_name_or_path" (planner/config/model_name.hpp),
        # else by the folder, which says so.
        return files.write("config.json", json.dumps(value, default=str), "model (dict)", "unnamed-model")
    return value


def _gpu_arg(value, files):
    if isinstance(value, dict):
        text = "".join(f"{key} = {_toml_value(key, v)}\n" for key, v in value.items())
        return files.write("gpu.toml", text, "gpu (dict)")
    return value


def _argv(command, flags, files):
    """Keyword arguments to the command's flags, checked against its flag table."""
    table = _FLAGS[command]
    argv = []
    for key, value in flags.items():
        name = key.replace("_", "-")
        if name == "json":  # the functions return what --json prints, parsed: the flag is theirs
            raise ValueError(f"json: not a keyword of spplan.{command.replace('-', '_')} (allowed: leave it out; "
                             "the result is already the parsed --json output)")
        spec = table.get(name)
        if spec is None:
            argv.append(f"--{name}")  # the command names the flag and the allowed ones
            continue
        if not spec["takes_value"]:
            if value not in (True, False, None):
                raise ValueError(f"--{name}: value {value!r} is not allowed (allowed: True or False)")
            if value:
                argv.append(f"--{name}")
            elif value is False and spec["opposite"] in table:
                # The switch that undoes it: tiled_mlp=False is --no-tiled-mlp, freeze_encoders=False
                # is --train-encoders (the flag table's FlagSpec::opposite).
                argv.append(f"--{spec['opposite']}")
            continue
        if value is None:
            continue
        if isinstance(value, bool):
            raise ValueError(f"--{name}: value {value!r} is not allowed (allowed: {spec['allowed']})")
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # gpus=8.0 and seq=1e6 are whole numbers, as the command line writes them
        if name == "model":
            value = _model_arg(value, files)
        elif name == "gpu":
            value = _gpu_arg(value, files)
        elif isinstance(value, os.PathLike):
            value = os.fspath(value)
        argv.append(f"--{name}={value}")  # the = form: a value may start with "-"
    return argv


def _caller_stacklevel():
    """The ``stacklevel`` that points a warning raised in ``_run`` at the first frame outside this
    package: the user's line, however many of the package's functions lie between (once, a fixed
    level pointed ``export`` and ``stack_configs`` warnings at ``sys:1``)."""
    level, frame = 2, sys._getframe(2)  # level 1 is _run, 2 its caller
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _HERE:
        frame = frame.f_back
        level += 1
    return level


def _run(command, flags, json_output=True, operands=()):
    """Runs `spplan COMMAND` in process: its stdout, after raising its error and warnings.
    `operands`: paths after the flags (check's run logs)."""
    with _Files() as files:
        argv = _argv(command, flags, files) + [os.fspath(o) for o in operands]
        if json_output:
            argv.append("--json")
        # Bytes, as the operating system takes paths: a folder named in Latin-1 reaches Python as a
        # str with surrogates (PEP 383), which os.fsencode turns back into its bytes.
        exit_code, out, err = _spplan.run(command, [os.fsencode(a) for a in argv])
        lines = [files.shown(line) for line in err.splitlines()]
    for line in lines:
        if line.startswith("spplan: warning: "):
            warnings.warn(line[len("spplan: warning: "):], stacklevel=_caller_stacklevel())
    errors = [line[len("spplan: "):] if line.startswith("spplan: ") else line
              for line in lines if not line.startswith("spplan: warning: ")]
    if exit_code == 2:
        raise ValueError(errors[0] if errors else f"spplan {command}: bad input")
    if exit_code not in (0, 1):  # 1: nothing fits, or a run that is not its plan: the JSON says
        raise RuntimeError(errors[0] if errors else f"spplan {command}: exit code {exit_code}")
    return out


def _json_command(command, flags):
    return json.loads(_run(command, flags))


def estimate(**flags):
    return _json_command("estimate", flags)


def plan(**flags):
    return _json_command("plan", flags)


def fit(**flags):
    return _json_command("fit", flags)


def rent(**flags):
    return _json_command("rent", flags)


def max_seq(**flags):
    return _json_command("max-seq", flags)


def sweep(**flags):
    return _json_command("sweep", flags)


def simulate(**flags):
    return _json_command("simulate", flags)


def check(plan, *logs, **flags):
    """`spplan check --plan PLAN LOG...`: the logs of a run (the HF Trainer's or TRL's
    trainer_state.json, ArcticTraining's metrics, DeepSpeed's log, `spplan run`'s report or log,
    torch's memory lines, nvidia-smi's CSV) held against the plan it was launched from, as the
    parsed --json report: predicted, measured, comparisons, band, findings and as_planned (False
    when a finding says the run is not the plan: a result, not an error)."""
    if not logs:
        raise ValueError("check: no run log given (allowed: one or more log files after the plan)")
    return json.loads(_run("check", dict(flags, plan=plan), operands=logs))


def export(**flags):
    """The export as text (DeepSpeed JSON, Accelerate YAML, ArcticTraining YAML, a torchrun line);
    with ``out=PATH`` it is written there and "" is returned."""
    return _run("export", flags, json_output=False)


def _attach_help(function, command):
    function.__doc__ = (function.__doc__ + "\n\n" if function.__doc__ else "") + _spplan.help(command)


for _function, _command in [(estimate, "estimate"), (plan, "plan"), (fit, "fit"), (rent, "rent"),
                            (max_seq, "max-seq"), (sweep, "sweep"), (export, "export"), (check, "check")]:
    _attach_help(_function, _command)
if "simulate" in _FLAGS:
    _attach_help(simulate, "simulate")


# The accelerate YAML's keys that are not ParallelismConfig's own (accelerate 1.15.0
# parallelism_config.py): its handlers' (utils/dataclasses.py DeepSpeedSequenceParallelConfig,
# TorchContextParallelConfig), which `accelerate launch` builds from the same YAML.
_SP_HANDLER_KEYS = ("sp_seq_length", "sp_seq_length_is_variable", "sp_attn_implementation")
_CP_HANDLER_KEYS = ("cp_comm_strategy",)
# The YAML's fsdp_config keys and FullyShardedDataParallelPlugin's fields they fill (accelerate
# 1.15.0 utils/launch.py sets FSDP_* variables from them, which the plugin's __post_init__ reads).
_FSDP_PLUGIN_FIELDS = {"fsdp_version": "fsdp_version", "fsdp_reshard_after_forward": "reshard_after_forward",
                       "fsdp_auto_wrap_policy": "auto_wrap_policy", "fsdp_offload_params": "cpu_offload",
                       "fsdp_state_dict_type": "state_dict_type",
                       "fsdp_activation_checkpointing": "activation_checkpointing",
                       "fsdp_cpu_ram_efficient_loading": "cpu_ram_efficient_loading"}


# The `trl sft` YAML's keys that are not SFTConfig's (trl 1.14.2 scripts/sft.py): ScriptArguments'
# and ModelConfig's, and the launcher's accelerate_config. sft.py passes the model's two to
# from_pretrained through model_init_kwargs; the placeholders are the caller's own arguments.
_TRL_LAUNCH_KEYS = ("model_name_or_path", "dataset_name", "accelerate_config")
_TRL_MODEL_KEYS = ("attn_implementation", "dtype")


def _sft_config_kwargs(config):
    """The trl YAML's SFTConfig fields, the model's loading arguments in model_init_kwargs."""
    kwargs = {k: v for k, v in config.items() if k not in _TRL_LAUNCH_KEYS + _TRL_MODEL_KEYS}
    kwargs["model_init_kwargs"] = {**{k: config[k] for k in _TRL_MODEL_KEYS if k in config},
                                   **(config.get("model_init_kwargs") or {})}
    return kwargs


def _accelerate_kwargs(config):
    """The accelerate YAML's sections as the keyword arguments of the classes they configure."""
    section = config["parallelism_config"]
    kwargs = {key[len("parallelism_config_"):]: value for key, value in section.items()}
    out = {"accelerate_sp_handler": {k: kwargs.pop(k) for k in _SP_HANDLER_KEYS if k in kwargs} or None,
           "accelerate_cp_handler": {k: kwargs.pop(k) for k in _CP_HANDLER_KEYS if k in kwargs} or None,
           "accelerate_fsdp": None}
    if "fsdp_config" in config:
        out["accelerate_fsdp"] = {field: config["fsdp_config"][key] for key, field in _FSDP_PLUGIN_FIELDS.items()
                                  if key in config["fsdp_config"]}
    out["accelerate"] = kwargs
    return out


def stack_configs(plan):
    """What the training stacks take in code, for a plan file (``plan(..., out=PATH)`` writes one):

    - ``"accelerate"``: keyword arguments of ``accelerate.ParallelismConfig`` (its handlers'
      arguments apart: ``"accelerate_sp_handler"`` for ``DeepSpeedSequenceParallelConfig(**...)``
      under Ulysses, ``"accelerate_cp_handler"`` for ``TorchContextParallelConfig(**...)`` under a
      ring), and for a ring ``"accelerate_fsdp"``: keyword arguments of
      ``accelerate.utils.FullyShardedDataParallelPlugin`` (FSDP2, which the ring runs on),
    - ``"deepspeed"``: the DeepSpeed config dict (``TrainingArguments(deepspeed=...)``,
      ``deepspeed.initialize(config=...)``),
    - ``"arctic"``: ArcticTraining's recipe YAML text,
    - ``"trl"``: keyword arguments of ``trl.SFTConfig`` for a ``trl`` plan (``SFTTrainer(model=...,
      args=SFTConfig(**...))``): the ``trl sft`` YAML's SFTConfig fields, the model's
      ``attn_implementation`` and ``dtype`` in ``model_init_kwargs`` (where ``trl sft`` puts them).

    Each comes from ``spplan export`` of that plan. A format of another trainer than the plan's (the
    plan file's ``trainer``: ArcticTraining's recipe for an ``hf`` plan), or one that cannot express
    the plan (a micro batch above 1 for ArcticTraining), has None, and its one-line reason under
    ``"refused"``.
    """
    import yaml  # a dependency of the package (pyproject.toml)

    path = os.fspath(plan)
    configs = {"refused": {}, "accelerate_sp_handler": None, "accelerate_cp_handler": None, "accelerate_fsdp": None}
    for fmt in ("deepspeed", "accelerate", "arctic", "trl"):
        try:
            with warnings.catch_warnings():
                if fmt != "deepspeed":  # the plan's warnings come once, with the first export
                    warnings.simplefilter("ignore")
                text = _run("export", {"plan": path, "format": fmt}, json_output=False)
        except ValueError as error:
            configs[fmt] = None
            configs["refused"][fmt] = str(error)
            continue
        if fmt == "deepspeed":
            configs["deepspeed"] = json.loads(text)
        elif fmt == "accelerate":
            configs.update(_accelerate_kwargs(yaml.safe_load(text)))
        elif fmt == "trl":
            configs["trl"] = _sft_config_kwargs(yaml.safe_load(text))
        else:
            configs["arctic"] = text
    return configs
