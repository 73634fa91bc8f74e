"""API conformance for the aider tier's typed tracks (issue 19, item 3): the public signatures a stub declares,
read with tree-sitter, against the solution's.

A test of a typed track calls the API the stub declares; a solution that changes a declared return type (to a
type of its own whose equality answers yes to anything), a declared parameter type, or removes a declared item
compiles against tests that were written for something else only when it games them. ``conformance`` compares
the items the stub declares with the solution's and returns one ``signature`` flag per item changed or removed,
shaped as the suspicion scan's flags (``rules.scan.scan``): evidence for a reviewer, the verdict is unchanged.

What is compared, per track (a solution may add anything, and may change bodies, parameter names, modifiers and
layout; the references of the whole polyglot benchmark pass unflagged, tests/test_signatures.py):

- Java: every non-private class, interface, enum and record (nested ones by their dotted path), and their
  non-private methods (return type, parameter types) and constructors (parameter types);
- Rust: ``pub`` structs, enums, traits, type aliases and ``pub fn``s, free, in inherent ``impl`` blocks (keyed by
  the type's name) and in ``mod``s (return type and the types of the parameters after ``self``; lifetimes and
  ``Self`` are read as the type they stand for);
- C++: the declarations of the headers (classes and structs by their namespace path, their public member
  functions and the free functions: return type and parameter types);
- Go: exported types and exported functions and methods (keyed by the receiver's type name: parameter and
  result types).

Python and JavaScript declare no types: nothing is compared there.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

FLAG = "signature"
WHY_CHANGED = "changes the types of a public signature the stub declares (the tests were written for the stub's)"
WHY_REMOVED = "removes a public item the stub declares"
TEXT_CAP = 300  # characters of a flag's text (the stub's signature and the solution's)
EXTENSIONS = {"java": (".java",), "rust": (".rs",), "cpp": (".h", ".hh", ".hpp", ".hxx"), "go": (".go",)}
GRAMMARS = {"java": "tree_sitter_java", "rust": "tree_sitter_rust", "cpp": "tree_sitter_cpp", "go": "tree_sitter_go"}


@dataclass(frozen=True)
class Item:
    """One public item a file declares: ``key`` (``(container path, name)``: ``("Game", "roll")``; a type's
    container is its enclosing path and its name its own), ``kind`` ("type" or "function"), ``params`` (the
    parameter types, normalized; () for a type), ``result`` (the return type, normalized; "" for none or a
    type), ``text`` (the signature as written, one line) and ``file``/``line`` (1-based) where it is."""

    key: tuple[str, str]
    kind: str
    params: tuple[str, ...] = ()
    result: str = ""
    text: str = ""
    file: str = ""
    line: int = 0


@lru_cache(maxsize=None)
def _parser(language: str):
    """A tree-sitter parser of ``language``'s grammar (the PyPI wheels pinned in pyproject.toml)."""
    import importlib

    import tree_sitter

    grammar = importlib.import_module(GRAMMARS[language])
    return tree_sitter.Parser(tree_sitter.Language(grammar.language()))


def _text(node) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _norm(t: str) -> str:
    """A type's text without layout: whitespace collapsed, and dropped beside punctuation (``List< int >`` →
    ``List<int>``)."""
    t = re.sub(r"\s+", " ", t).strip()
    return re.sub(r" ?([^\w ]) ?", r"\1", t)


def _one_line(t: str) -> str:
    return re.sub(r"\s+", " ", t).strip()


def _field(node, name: str):
    return node.child_by_field_name(name)


# ---- Java ----

JAVA_TYPES = {"class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
              "annotation_type_declaration"}


def _java_private(node) -> bool:
    mods = next((c for c in node.children if c.type == "modifiers"), None)
    return mods is not None and re.search(r"\bprivate\b", _text(mods)) is not None


def _java_params(node) -> tuple[str, ...]:
    out = []
    for p in _field(node, "parameters").named_children if _field(node, "parameters") is not None else ():
        if p.type == "formal_parameter":
            out.append(_norm(_text(_field(p, "type")) + "[]" * _text(_field(p, "dimensions")).count("[")))
        elif p.type == "spread_parameter":
            kind = next((c for c in p.named_children if c.type not in ("modifiers", "variable_declarator")), None)
            out.append(_norm(_text(kind)) + "...")
    return tuple(out)


def _java(root, path: str) -> list[Item]:
    items: list[Item] = []

    def visit(node, container: str) -> None:
        for c in node.named_children:
            if c.type in JAVA_TYPES and not _java_private(c):
                name = _text(_field(c, "name"))
                items.append(Item((container, name), "type", text=_one_line(_text(c).split("{", 1)[0]),
                                  file=path, line=c.start_point[0] + 1))
                body = _field(c, "body")
                if body is not None:
                    visit(body, f"{container}.{name}" if container else name)
            elif c.type in ("enum_body_declarations",):
                visit(c, container)
            elif c.type in ("method_declaration", "constructor_declaration") and container and not _java_private(c):
                name = _text(_field(c, "name"))
                result = _norm(_text(_field(c, "type")) + "[]" * _text(_field(c, "dimensions")).count("["))
                head = _text(c).split("{", 1)[0].rstrip().rstrip(";")
                items.append(Item((container, name), "function", _java_params(c), result,
                                  _one_line(re.sub(r"@\w+(\([^)]*\))?\s*", "", head)), path, c.start_point[0] + 1))
    visit(root, "")
    return items


# ---- Rust ----

RUST_TYPES = {"struct_item", "enum_item", "trait_item", "type_item", "union_item"}


def _rust_pub(node) -> bool:
    return any(c.type == "visibility_modifier" for c in node.children)


def _rust_type(t: str, self_type: str) -> str:
    """A Rust type's text read as the type it names: lifetimes dropped (``&'a str`` → ``&str``), ``Self`` as the
    impl's type."""
    t = re.sub(r"'\w+\s*\+?\s*", "", t)
    t = re.sub(r"<\s*,?\s*>", "", re.sub(r"<\s*,", "<", re.sub(r",\s*(?=[,>])", "", t)))
    if self_type:
        t = re.sub(r"\bSelf\b", self_type, t)
    return _norm(t)


def _rust_base(t: str) -> str:
    """The name of the type an ``impl`` is for: ``BinarySearchTree<T>`` → ``BinarySearchTree``."""
    return re.split(r"[<\s]", t.strip().lstrip("&"), maxsplit=1)[0].split("::")[-1]


def _rust_fn(c, container: str, self_type: str, path: str) -> Item:
    params = tuple(_rust_type(_text(_field(p, "type")), self_type)
                   for p in _field(c, "parameters").named_children if p.type == "parameter")
    result = _rust_type(_text(_field(c, "return_type")), self_type)
    head = _text(c).split("{", 1)[0].rstrip().rstrip(";")
    return Item((container, _text(_field(c, "name"))), "function", params, result, _one_line(head), path,
                c.start_point[0] + 1)


def _rust(root, path: str) -> list[Item]:
    items: list[Item] = []

    def visit(node, mod: str) -> None:
        for c in node.named_children:
            if c.type in RUST_TYPES and _rust_pub(c):
                name = _text(_field(c, "name"))
                items.append(Item((mod, name), "type", text=_one_line(_text(c).split("{", 1)[0]), file=path,
                                  line=c.start_point[0] + 1))
                if c.type == "trait_item" and _field(c, "body") is not None:
                    for f in _field(c, "body").named_children:
                        if f.type in ("function_signature_item", "function_item"):
                            items.append(_rust_fn(f, _join(mod, name), "", path))
            elif c.type == "function_item" and _rust_pub(c):
                items.append(_rust_fn(c, mod, "", path))
            elif c.type == "impl_item" and _field(c, "trait") is None and _field(c, "body") is not None:
                base = _rust_base(_text(_field(c, "type")))
                for f in _field(c, "body").named_children:
                    if f.type == "function_item" and _rust_pub(f):
                        items.append(_rust_fn(f, _join(mod, base), base, path))
            elif c.type == "mod_item" and _rust_pub(c) and _field(c, "body") is not None:
                visit(_field(c, "body"), _join(mod, _text(_field(c, "name"))))
    visit(root, "")
    return items


def _join(outer: str, inner: str) -> str:
    return f"{outer}::{inner}" if outer else inner


# ---- C++ ----

CPP_RECORDS = {"class_specifier", "struct_specifier"}
CPP_WRAPPERS = {"preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif", "linkage_specification",
                "declaration_list", "template_declaration"}


def _cpp_function(declarator):
    """The function_declarator inside a declarator (under pointer and reference declarators), or None."""
    while declarator is not None and declarator.type != "function_declarator":
        if declarator.type not in ("pointer_declarator", "reference_declarator", "parenthesized_declarator"):
            return None
        declarator = _field(declarator, "declarator") or next(
            (c for c in declarator.named_children if "declarator" in c.type), None)
    return declarator


def _cpp_marks(declarator, fn) -> str:
    """The ``*`` and ``&`` a declarator puts on the function's return type (``const std::string& name()``)."""
    marks = ""
    while declarator is not None and declarator != fn:
        if declarator.type == "pointer_declarator":
            marks += "*"
        elif declarator.type == "reference_declarator":
            marks += _text(declarator.children[0]) if declarator.children else "&"
        declarator = _field(declarator, "declarator") or next(
            (c for c in declarator.named_children if "declarator" in c.type), None)
    return marks


def _cpp_param(p) -> str:
    """A parameter's type: its text without its name and default value."""
    text, start = _text(p), p.start_byte
    cut = _field(p, "default_value")
    if cut is not None:
        text = p.text[:cut.start_byte - start].decode("utf-8", "replace").rstrip().rstrip("=")
    name = _field(p, "declarator")
    while name is not None and name.type not in ("identifier",):
        name = _field(name, "declarator") or next((c for c in name.named_children if c.type == "identifier"
                                                    or "declarator" in c.type), None)
    if name is not None and name.end_byte - start <= len(text.encode()):
        raw = text.encode()
        text = (raw[:name.start_byte - start] + raw[name.end_byte - start:]).decode("utf-8", "replace")
    return _norm(text)


def _cpp(root, path: str) -> list[Item]:
    items: list[Item] = []

    def function(c, container: str) -> None:
        declarator = _field(c, "declarator")
        fn = _cpp_function(declarator)
        if fn is None:
            return
        name = _norm(_text(_field(fn, "declarator")))
        if "::" in name:  # an out-of-class definition in a header: ``int clock::hour() const``
            outer, name = name.rsplit("::", 1)
            container = _join(container, outer)
        params = tuple(_cpp_param(p) for p in _field(fn, "parameters").named_children
                       if p.type in ("parameter_declaration", "optional_parameter_declaration",
                                     "variadic_parameter_declaration"))
        if params == ("void",):
            params = ()
        result = _norm(" ".join(_text(m) for m in c.children
                                if m.type in ("type_qualifier", "storage_class_specifier") and _text(m) == "const")
                       + " " + _text(_field(c, "type"))) + _cpp_marks(declarator, fn) if _field(c, "type") else ""
        head = _text(c).split("{", 1)[0].rstrip().rstrip(";")
        items.append(Item((container, name), "function", params, result, _one_line(head), path,
                          c.start_point[0] + 1))

    def visit(node, container: str, public: bool = True) -> None:
        access = public
        for c in node.named_children:
            if c.type == "access_specifier":
                access = _text(c).strip().rstrip(":").strip() == "public"
                continue
            if c.type == "namespace_definition":
                body = _field(c, "body")
                if body is not None:
                    visit(body, _join(container, _text(_field(c, "name"))))
            elif c.type in CPP_WRAPPERS:
                visit(c, container, access)
            elif c.type in CPP_RECORDS and access and _field(c, "name") is not None:
                record(c, container)
            elif c.type in ("declaration", "field_declaration", "function_definition") and access:
                kind = _field(c, "type")
                if kind is not None and kind.type in CPP_RECORDS and _field(kind, "name") is not None \
                        and _field(kind, "body") is not None:
                    record(kind, container)
                function(c, container)

    def record(c, container: str) -> None:
        name = _text(_field(c, "name"))
        items.append(Item((container, name), "type", text=_one_line(_text(c).split("{", 1)[0]), file=path,
                          line=c.start_point[0] + 1))
        body = _field(c, "body")
        if body is not None:
            visit(body, _join(container, name), c.type == "struct_specifier")

    visit(root, "")
    return items


# ---- Go ----

def _go_exported(name: str) -> bool:
    return name[:1].isupper()


def _go_types(plist) -> tuple[str, ...]:
    """The types of a Go parameter or result list, one per parameter (``a, b int`` → ``int, int``)."""
    if plist is None:
        return ()
    if plist.type != "parameter_list":
        return (_norm(_text(plist)),)
    out = []
    for p in plist.named_children:
        if p.type == "parameter_declaration":
            names = sum(1 for n in p.children_by_field_name("name"))
            out += [_norm(_text(_field(p, "type")))] * max(1, names)
        elif p.type == "variadic_parameter_declaration":
            out.append("..." + _norm(_text(_field(p, "type"))))
    return tuple(out)


def _go(root, path: str) -> list[Item]:
    items: list[Item] = []
    for c in root.named_children:
        if c.type == "type_declaration":
            for spec in c.named_children:
                name = _text(_field(spec, "name"))
                if spec.type in ("type_spec", "type_alias") and _go_exported(name):
                    items.append(Item(("", name), "type", text=_one_line("type " + _text(spec).split("{", 1)[0]),
                                      file=path, line=spec.start_point[0] + 1))
        elif c.type in ("function_declaration", "method_declaration"):
            name = _text(_field(c, "name"))
            if not _go_exported(name):
                continue
            container = ""
            if c.type == "method_declaration":
                recv = _go_types(_field(c, "receiver"))
                container = re.split(r"[\[\s]", recv[0].lstrip("*"), maxsplit=1)[0] if recv else ""
            result = ",".join(_go_types(_field(c, "result")))
            head = _text(c).split("{", 1)[0].rstrip()
            items.append(Item((container, name), "function", _go_types(_field(c, "parameters")), result,
                              _one_line(head), path, c.start_point[0] + 1))
    return items


READERS = {"java": _java, "rust": _rust, "cpp": _cpp, "go": _go}


def declared(language: str, files: dict[str, bytes]) -> list[Item]:
    """The public items ``files`` ({path: source}) of ``language``'s track declare (see the module's list); []
    for a track without types or a file of another extension. Never raises on broken source: tree-sitter reads
    what it can (an item it cannot read is absent)."""
    reader = READERS.get(language)
    if reader is None:
        return []
    items = []
    for path, data in sorted(files.items()):
        if path.endswith(EXTENSIONS[language]) and not _test_file(language, path):
            items += reader(_parser(language).parse(data).root_node, path)
    return items


def _test_file(language: str, path: str) -> bool:
    return (language == "go" and path.endswith("_test.go")) or re.search(r"(^|/)(src/)?tests?/", path) is not None


def _flag(why: str, stub: Item, found: Item | None) -> dict:
    text = f"stub: {stub.text} | solution: {found.text if found else '(absent)'}"
    return {"name": FLAG, "file": (found or stub).file, "line": found.line if found else None,
            "text": text[:TEXT_CAP], "why": why}


def compare(stub: list[Item], solution: list[Item], reference: list[Item] | None = None) -> list[dict]:
    """The ``signature`` flags of ``solution``'s items against the ``stub``'s: one per stub item the solution
    removes (no item of its key and kind) or whose types it changes (no item of its key with the stub's
    parameter and return types; overloads are matched by their parameter types), in the stub's order.
    ``reference``: the items of the exercise's reference solution, proven against the same tests: where it
    departs from its own stub (upstream's references do, in 12 exercises of the polyglot benchmark: a wider
    integer, a concrete map type, a builder of another name), the reference's signature is accepted too, and
    an item the reference lacks may be absent. The flag's ``text`` holds both signatures (``stub: ... |
    solution: ...``), ``line`` the solution's (None for a removed item)."""
    def index(items):
        out: dict[tuple, list[Item]] = {}
        for it in items or ():
            out.setdefault((it.kind, it.key), []).append(it)
        return out

    by_key, by_ref = index(solution), index(reference)
    flags = []
    for it in stub:
        found, ref = by_key.get((it.kind, it.key), []), by_ref.get((it.kind, it.key), [])
        if not found:
            if reference is None or ref:
                flags.append(_flag(WHY_REMOVED, it, None))
        elif it.kind == "function":
            allowed = {(it.params, it.result)} | {(r.params, r.result) for r in ref}
            if not any((f.params, f.result) in allowed for f in found):
                same_params = [f for f in found if f.params == it.params]
                flags.append(_flag(WHY_CHANGED, it, (same_params or found)[0]))
    return flags


def read_tree(language: str, tree: Path, solution_files: list[str], whole: bool) -> dict[str, bytes]:
    """The sources of ``language`` a conformance check reads in ``tree``: the ``solution_files`` and, when
    ``whole`` (the solution's side: an item may move to a file of its own), every other file of the track's
    extensions in the solution files' folders (Java's and Rust's: below them), test files left out. Files that
    are not regular (symlinks, devices) or cannot be read are skipped."""
    tree = Path(tree)
    paths = set(solution_files)
    if whole:
        for rel in solution_files:
            folder = tree / Path(rel).parent
            if not folder.is_dir() or folder.is_symlink():
                continue
            found = folder.rglob("*") if language in ("java", "rust") else folder.iterdir()
            paths |= {p.relative_to(tree).as_posix() for p in found if p.suffix in EXTENSIONS.get(language, ())}
    out = {}
    for rel in sorted(paths):
        p = tree / rel
        try:
            if p.is_file() and not p.is_symlink():
                out[rel] = p.read_bytes()
        except OSError:
            continue
    return out


def conformance(language: str, stub: Path, solution: Path, solution_files: list[str],
                reference: Path | None = None) -> list[dict]:
    """The ``signature`` flags of the ``solution`` tree against the ``stub`` tree of an exercise of
    ``language`` whose solution files (task.json's ``solution_files``) are ``solution_files``: ``compare`` of
    what each declares, with the items of the ``reference`` tree (the reference solution's files laid at
    their work-tree paths; None or a missing folder: the stub alone decides). [] for a track without types,
    or a stub that declares nothing."""
    if language not in READERS:
        return []
    declared_by_stub = declared(language, read_tree(language, stub, solution_files, whole=False))
    if not declared_by_stub:
        return []
    ref = (declared(language, read_tree(language, reference, solution_files, whole=True))
           if reference is not None and Path(reference).is_dir() else None)
    return compare(declared_by_stub, declared(language, read_tree(language, solution, solution_files, whole=True)), ref)
