"""Dump Megatron-LM's command-line flags from its own argparse parser (clustercast test tooling).

Run from a Megatron-LM checkout (no GPU, no torch needed: torch and the optional GPU packages
are replaced by stand-ins, which only the flags' types and defaults ever touch):
    PYTHONPATH=<checkout> python3 dump_megatron_flags.py > arguments_flags.tsv
One line per option string: FLAG <tab> KIND <tab> TYPE <tab> CHOICES
  KIND: flag (takes no value), value (one value), list (nargs + or *), or the nargs number
  TYPE: int, float, str, or other (a converter we do not check)
  CHOICES: comma-separated, or - when any value of TYPE is allowed
"""
import argparse
import functools
import enum
import importlib
import importlib.abc
import importlib.machinery
import re
import sys
import types
import typing

STANDIN_ROOTS = {"torch", "transformer_engine", "apex", "flash_attn", "einops", "triton", "wandb",
                 "tensorboard", "nvidia_resiliency_ext", "multistorageclient", "modelopt", "nvtx",
                 "onelogger", "one_logger", "tqdm", "numpy", "safetensors",
                 "megatron.core.extensions.transformer_engine", "zarr", "tensorstore", "mamba_ssm",
                 "causal_conv1d", "emerging_optimizers", "flashinfer", "yaml", "psutil", "regex",
                 "sentencepiece", "tiktoken", "transformers", "nltk", "datasets", "cupy", "nvshmem",
                 "deep_ep", "nccl", "pynvml", "wrapt", "fsspec", "boto3", "requests", "pydantic",
                 "opentelemetry", "cuda", "hypercorn", "flask", "quart", "aiohttp", "msgpack", "zmq"}


class _StandinMeta(type(typing.Protocol)):
    """Classes that answer every attribute, call and subscript with another stand-in class."""

    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _StandinMeta(name, (Standin,), {})

    def __getitem__(cls, item):
        return cls

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # a decorator: keep the function it wraps
        return super().__call__(*args, **kwargs)

    def __or__(cls, other):
        return typing.Union[cls, other]

    def __ror__(cls, other):
        return typing.Union[other, cls]

    def __iter__(cls):
        return iter(())

    def __bool__(cls):
        return False


class Standin(metaclass=_StandinMeta):
    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Standin()

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # a decorator: keep the function it wraps
        return Standin()

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __getitem__(self, item):
        return Standin()

    def __lt__(self, other):
        return False

    __le__ = __gt__ = __ge__ = __lt__


class StandinModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _StandinMeta(name, (Standin,), {})


class StandinFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if any(name == r or name.startswith(r + ".") for r in STANDIN_ROOTS):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = StandinModule(spec.name)
        module.__path__ = []
        module.__spec__ = spec
        module.__version__ = "99.0.0"
        return module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, StandinFinder())
# Megatron-LM compares package versions with packaging.version; where `packaging` is not
# installed, a stand-in that compares the numeric release parts is enough for the parser.
@functools.total_ordering
class _StandinVersion:
    def __init__(self, text):
        self.text = str(text)
        self.release = tuple(int(x) for x in re.findall(r"\d+", self.text.split("+")[0])[:4])

    def _other(self, other):
        return other.release if isinstance(other, _StandinVersion) else _StandinVersion(other).release

    def __eq__(self, other):
        return self.release == self._other(other)

    def __lt__(self, other):
        return self.release < self._other(other)

    def __hash__(self):
        return hash(self.release)

    def __str__(self):
        return self.text

    major = property(lambda self: (self.release + (0, 0, 0))[0])
    minor = property(lambda self: (self.release + (0, 0, 0))[1])
    micro = property(lambda self: (self.release + (0, 0, 0))[2])
    base_version = property(lambda self: ".".join(map(str, self.release)))


try:
    import packaging.version  # noqa: F401
except ImportError:
    _packaging = types.ModuleType("packaging")
    _packaging.__path__ = []
    _packaging.__version__ = "24.0"
    _version = types.ModuleType("packaging.version")
    _version.Version = _version.parse = _StandinVersion
    _version.InvalidVersion = ValueError
    _packaging.version = _version
    sys.modules["packaging"] = _packaging
    sys.modules["packaging.version"] = _version
if not hasattr(typing, "override"):  # Python < 3.12
    typing.override = lambda f: f

import megatron  # noqa: E402

# megatron.training's __init__ imports the whole trainer; the parser needs only its modules.
_TRAINING_DIR = __import__("pathlib").Path(megatron.__path__[0]) / "training"


class _TrainingPackage(types.ModuleType):
    """Its real submodules; a stand-in for what its __init__ would have re-exported."""

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if (_TRAINING_DIR / (name + ".py")).exists() or (_TRAINING_DIR / name).is_dir():
            return importlib.import_module("megatron.training." + name)
        return Standin


_training = _TrainingPackage("megatron.training")
_training.__path__ = [str(_TRAINING_DIR)]
sys.modules["megatron.training"] = _training
from megatron.training import arguments  # noqa: E402

parser = argparse.ArgumentParser(allow_abbrev=False)
arguments.add_megatron_arguments(parser)


def type_name(t):
    if t in (int, float, str):
        return t.__name__
    return "other"


def choices_of(action):
    if not action.choices:
        return "-"
    out = []
    for c in action.choices:
        out.append(c.name if isinstance(c, enum.Enum) else str(c))
    return ",".join(out)


for action in parser._actions:
    if isinstance(action, argparse._HelpAction):
        continue
    if action.nargs == 0:
        kind = "flag"
    elif action.nargs is None or action.nargs == "?":
        kind = "value" if action.nargs is None else "optional"
    elif action.nargs in ("+", "*"):
        kind = "list"
    else:
        kind = str(action.nargs)
    for flag in action.option_strings:
        print(f"{flag}\t{kind}\t{type_name(action.type) if kind != 'flag' else '-'}\t{choices_of(action)}")
