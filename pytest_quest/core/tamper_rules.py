"""The catalog of tamper signs: which names, hooks and options are signs, and why.

Data only; ``core.tamper_python`` and ``core.tamper`` apply it. Every `why` is
written to finish the sentence "this line ...", and is shown in the fact.
"""

from __future__ import annotations

import re

# Modules whose mere presence in test code is the sign. Reported where the
# module is obtained (an import, `__import__`, `sys.modules[...]`), not at each
# later use, so one `import coverage` is one finding.
MODULES: dict[str, tuple[str, str]] = {
    "pytest_quest": ("internals", "reaches into pytest-quest, the judge of these tests"),
    "coverage": ("internals", "reaches into coverage.py, which produces the gate's evidence"),
    "pytest_cov": ("internals", "reaches into pytest-cov, which may run the measurement"),
    "ctypes": ("ctypes", "loads ctypes, which reads and writes any memory of the process"),
    "_ctypes": ("ctypes", "loads ctypes, which reads and writes any memory of the process"),
}

_TRACE = "installs or reads the trace hook that coverage.py measures with"
_FRAMES = "walks up the call stack into the frames of the test runner and the plugin"
_HEAP = "walks the heap, where the plugin's own objects can be found and changed"
_DETACH = "starts a process that can outlive the gate's run"
_EXIT = "runs code after the tests, when the plugin has already written its results"
_CODE = "builds or swaps code objects, as the mutation check does"

# Names that are a sign wherever they are referenced (called, aliased, passed).
# A dotted name also covers everything inside it (`sys.monitoring.*`).
MEMBERS: dict[str, tuple[str, str]] = {
    **dict.fromkeys(
        (
            "sys.settrace",
            "sys.setprofile",
            "sys.gettrace",
            "sys.getprofile",
            "sys.call_tracing",
            "sys.monitoring",
            "sys.addaudithook",
            "threading.settrace",
            "threading.setprofile",
            "threading.settrace_all_threads",
            "threading.setprofile_all_threads",
            "threading.gettrace",
            "threading.getprofile",
        ),
        ("tracing", _TRACE),
    ),
    **dict.fromkeys(("types.CodeType", "types.FunctionType", "types.LambdaType"), ("code", _CODE)),
    **dict.fromkeys(
        (
            "atexit.register",
            "atexit.unregister",
            "atexit._run_exitfuncs",
            "atexit._clear",
            "threading._register_atexit",
            "os.register_at_fork",
        ),
        ("atexit", _EXIT),
    ),
    **dict.fromkeys(
        (
            "os.setsid",
            "os.setpgrp",
            "os.setpgid",
            "os.fork",
            "os.forkpty",
            "pty.fork",
            "os.startfile",
            "os.P_NOWAIT",
            "os.P_NOWAITO",
            "os.P_DETACH",
            "subprocess.DETACHED_PROCESS",
            "subprocess.CREATE_NEW_PROCESS_GROUP",
            "subprocess.CREATE_BREAKAWAY_FROM_JOB",
            "daemon.DaemonContext",
        ),
        ("process", _DETACH),
    ),
    "os.getppid": ("process", "names the parent process: the gate's runner"),
    "os.link": ("ratchet", "makes a hard link, through which the ratchet file can be written"),
    **dict.fromkeys(
        (
            "gc.get_referrers",
            "gc.get_referents",
            "gc.get_objects",
            "gc.callbacks",
            "sys.getobjects",
        ),
        ("heap", _HEAP),
    ),
    **dict.fromkeys(
        (
            "sys._getframe",
            "sys._current_frames",
            "sys._getframemodulename",
            "inspect.stack",
            "inspect.getouterframes",
            "traceback.walk_stack",
        ),
        ("frames", _FRAMES),
    ),
}
FRAMES_WHY = _FRAMES
# Frame attributes that hand over other frames or their namespaces.
FRAME_NAMESPACES = frozenset({"f_back", "f_globals", "f_locals", "f_builtins"})
FRAME_METADATA = frozenset({"f_code", "f_lineno", "f_lasti"})
# Names, not behaviour: the same before and after a mutant is swapped in.
CODE_METADATA = frozenset(
    {
        "co_filename",
        "co_name",
        "co_qualname",
        "co_firstlineno",
        "co_varnames",
        "co_argcount",
        "co_flags",
    }
)
# Roots of expressions that reach the running session rather than a config or
# item a test built for itself (with pytester).
SESSION_ROOTS = frozenset({"request", "pytestconfig"})
CODE_WHY = _CODE
DETACH_WHY = _DETACH

# Patching these in a test (`mock.patch("os.fork")`, `monkeypatch.setattr(atexit,
# "register", fake)`) replaces them without calling them: the honest way to test
# code that uses them. Reaching into the judge or the tracer is a sign either way.
PATCHABLE_KINDS = frozenset({"process", "atexit", "heap", "frames", "ratchet"})

CODE_DUNDERS = frozenset(
    {"__code__", "__defaults__", "__kwdefaults__", "__globals__", "__closure__"}
)

# Process starters whose arguments are scanned for detaching words.
PROCESS_STARTERS = frozenset(
    {
        *(f"subprocess.{name}" for name in ("Popen", "run", "call", "check_call", "check_output")),
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "os.system",
        "os.popen",
        "os.posix_spawn",
        "os.posix_spawnp",
        "pty.spawn",
        "asyncio.create_subprocess_exec",
        "asyncio.create_subprocess_shell",
        *(f"os.exec{suffix}" for suffix in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
        *(f"os.spawn{suffix}" for suffix in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
    }
)
# Method names that start processes whatever the receiver (an unresolved alias).
PROCESS_METHODS = frozenset(
    {"Popen", "check_output", "check_call", "create_subprocess_exec", "create_subprocess_shell"}
)
DETACH_WORDS = re.compile(
    r"(?<![\w-])(nohup|setsid|disown|daemonize|start-stop-daemon|systemd-run)(?![\w-])"
)
# A shell `&` that backgrounds a command; not `&&`, `2>&1` or `&>file`.
BACKGROUND = re.compile(r"(?<![&>|])&(?![&>])")
DETACH_KEYWORDS = frozenset(
    {"start_new_session", "process_group", "preexec_fn", "setsid", "setpgroup"}
)

# Writing, moving or removing a file; the path arguments are checked for the ratchet file.
FILE_WRITERS = frozenset(
    {
        "os.replace",
        "os.rename",
        "os.renames",
        "os.remove",
        "os.unlink",
        "os.truncate",
        "os.symlink",
        "os.chmod",
        "os.utime",
        "shutil.move",
        "fcntl.flock",
        "fcntl.lockf",
        "fcntl.fcntl",
    }
)
FILE_COPIERS = frozenset({"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree"})
FILE_OPENERS = frozenset({"builtins.open", "io.open", "codecs.open", "os.open", "io.FileIO"})
WRITE_METHODS = frozenset(
    {"write_text", "write_bytes", "touch", "unlink", "rename", "replace", "symlink_to", "chmod"}
)
HARD_LINK_METHODS = frozenset({"hardlink_to", "link_to"})
OS_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")

# pytest hooks that can change outcomes, selection, configuration, or run after
# the plugin has written its results. Not here, because they only add text or
# parametrize: pytest_addoption, pytest_generate_tests, pytest_report_header,
# pytest_report_collectionfinish, pytest_assertrepr_compare, pytest_make_parametrize_id.
HOOKS = frozenset(
    {
        "pytest_configure",
        "pytest_unconfigure",
        "pytest_sessionstart",
        "pytest_sessionfinish",
        "pytest_collection",
        "pytest_collection_modifyitems",
        "pytest_collection_finish",
        "pytest_deselected",
        "pytest_make_collect_report",
        "pytest_pyfunc_call",
        "pytest_load_initial_conftests",
        "pytest_plugin_registered",
        "pytest_addhooks",
        "pytest_fixture_setup",
        "pytest_fixture_post_finalizer",
        "pytest_terminal_summary",
    }
)
START_HOOKS = frozenset({"pytest_configure", "pytest_sessionstart"})
CONFIG_READS = frozenset({"addinivalue_line", "getoption", "getini", "getvalue"})
HOOK_PREFIXES = ("pytest_runtest_", "pytest_cmdline_", "pytest_report_")
TEXT_ONLY_HOOKS = frozenset({"pytest_report_header", "pytest_report_collectionfinish"})
PLUGIN_MANAGER_METHODS = frozenset(
    {
        "register",
        "unregister",
        "import_plugin",
        "consider_module",
        "consider_pluginarg",
        "consider_preparse",
        "set_blocked",
        "load_setuptools_entrypoints",
        "add_hookcall_monitoring",
        "subset_hook_caller",
    }
)
# Hooks that record or emit results: calling one by hand forges them.
RECORDING_HOOKS = frozenset(
    {
        "pytest_runtest_logreport",
        "pytest_runtest_logstart",
        "pytest_runtest_logfinish",
        "pytest_runtest_protocol",
        "pytest_runtest_makereport",
        "pytest_collectreport",
        "pytest_deselected",
        "pytest_sessionfinish",
        "pytest_unconfigure",
        "pytest_terminal_summary",
        "pytest_pyfunc_call",
    }
)
# Plugins bundled with pytest that a conftest may name in `pytest_plugins`.
BUNDLED_PLUGINS = frozenset({"pytester", "_pytest.pytester"})

QUEST_NAME = re.compile(r"pytest[_-]quest|^--quest", re.IGNORECASE)
COVERAGE_ENV = re.compile(r"^COVERAGE_[A-Z_]+$")
# The process table: which process runs the test, and which runs it (the gate's runner).
PROC_PATH = re.compile(r"^/proc(/|$)")


def is_hook(name: str) -> bool:
    if name in TEXT_ONLY_HOOKS:
        return False
    return name in HOOKS or name.startswith(HOOK_PREFIXES)
