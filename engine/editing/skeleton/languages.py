"""Per-language node-type tables for skeletons, and the language of a file path.

A region (a node the skeleton may keep or elide) is a named child of a *container* (a module,
block, class body...) that starts its own line. *Function* types own bodies whose statements
are the first to go; *import* types are kept whenever the budget allows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import PurePosixPath, PureWindowsPath


@dataclass(frozen=True, slots=True)
class Language:
    name: str  # what ctxtop calls it
    grammar: str | None  # tree-sitter-language-pack name; None: indentation folding only
    containers: frozenset[str] = frozenset()
    functions: frozenset[str] = frozenset()
    imports: frozenset[str] = frozenset()
    comments: frozenset[str] = frozenset({"comment"})
    never_regions: frozenset[str] = frozenset()  # parts of a node that must stay with it
    leading: frozenset[str] = frozenset()  # attributes and decorators: part of the next item
    import_pattern: str | None = None  # a region whose first line matches is an import too
    offside: bool = False  # blocks end by indentation (no closing bracket line)


def _set(*names: str) -> frozenset[str]:
    return frozenset(names)


_JS_CONTAINERS = _set(
    "program",
    "statement_block",
    "class_body",
    "object",
    "switch_body",
    "switch_case",
    "switch_default",
    "array",
)
_JS_FUNCTIONS = _set(
    "function_declaration",
    "generator_function_declaration",
    "function_expression",
    "function",
    "generator_function",
    "arrow_function",
    "method_definition",
)
_TS_CONTAINERS = _JS_CONTAINERS | _set("interface_body", "object_type", "enum_body", "jsx_element")
_C_CONTAINERS = _set(
    "translation_unit",
    "compound_statement",
    "field_declaration_list",
    "declaration_list",
    "enumerator_list",
    "initializer_list",
    "case_statement",
    "preproc_if",
    "preproc_ifdef",
    "preproc_else",
)

JAVASCRIPT = Language(
    "javascript",
    "javascript",
    _JS_CONTAINERS,
    _JS_FUNCTIONS,
    _set("import_statement"),
    import_pattern=r"(const|let|var)\s[^=]*=\s*require\(",
)
TYPESCRIPT = Language(
    "typescript",
    "typescript",
    _TS_CONTAINERS,
    _JS_FUNCTIONS,
    _set("import_statement"),
    never_regions=_set("jsx_opening_element", "jsx_closing_element"),
    leading=_set("decorator"),
)
TSX = replace(TYPESCRIPT, name="tsx", grammar="tsx")
PYTHON = Language(
    "python",
    "python",
    _set("module", "block"),
    _set("function_definition", "lambda"),
    _set("import_statement", "import_from_statement", "future_import_statement"),
    offside=True,
)
RUBY = Language(
    "ruby",
    "ruby",
    _set(
        "program",
        "body_statement",
        "then",
        "else",
        "case",
        "begin",
        "rescue",
        "ensure",
        "block_body",
        "do_block",
    ),
    _set("method", "singleton_method"),
    import_pattern=r"require(_relative)?\b",
)
RUST = Language(
    "rust",
    "rust",
    _set(
        "source_file",
        "block",
        "declaration_list",
        "field_declaration_list",
        "enum_variant_list",
        "match_block",
    ),
    _set("function_item", "closure_expression"),
    _set("use_declaration", "extern_crate_declaration"),
    comments=_set("line_comment", "block_comment"),
    leading=_set("attribute_item", "inner_attribute_item"),
)
GO = Language(
    "go",
    "go",
    _set(
        "source_file",
        "block",
        "statement_list",
        "field_declaration_list",
        "interface_type",
        "literal_value",
        "expression_switch_statement",
        "type_switch_statement",
        "select_statement",
        "import_spec_list",
        "const_declaration",
        "var_declaration",
        "var_spec_list",
    ),
    _set("function_declaration", "method_declaration", "func_literal"),
    _set("import_declaration", "package_clause"),
)
JAVA = Language(
    "java",
    "java",
    _set(
        "program",
        "class_body",
        "interface_body",
        "enum_body",
        "enum_body_declarations",
        "block",
        "constructor_body",
        "switch_block",
        "switch_block_statement_group",
        "record_declaration_body",
    ),
    _set("method_declaration", "constructor_declaration", "lambda_expression"),
    _set("import_declaration", "package_declaration"),
    comments=_set("line_comment", "block_comment"),
)
CPP = Language(
    "cpp",
    "cpp",
    _C_CONTAINERS,
    _set("function_definition", "lambda_expression"),
    _set("preproc_include", "using_declaration"),
)
C = Language(
    "c",
    "c",
    _C_CONTAINERS,
    _set("function_definition"),
    _set("preproc_include"),
)
CSHARP = Language(
    "csharp",
    "csharp",
    _set(
        "compilation_unit",
        "declaration_list",
        "block",
        "switch_body",
        "switch_section",
        "enum_member_declaration_list",
        "accessor_list",
    ),
    _set(
        "method_declaration",
        "constructor_declaration",
        "local_function_statement",
        "lambda_expression",
        "accessor_declaration",
        "operator_declaration",
    ),
    _set("using_directive", "extern_alias_directive"),
)
PHP = Language(
    "php",
    "php",
    _set(
        "program", "compound_statement", "declaration_list", "switch_block", "enum_declaration_list"
    ),
    _set(
        "function_definition",
        "method_declaration",
        "anonymous_function",
        "arrow_function",
    ),
    _set("namespace_use_declaration", "namespace_definition"),
    import_pattern=r"(require|include)(_once)?\b",
)

# Languages without a grammar here: outlined by indentation folding.
KOTLIN = Language("kotlin", None)
SWIFT = Language("swift", None)
SCALA = Language("scala", None)
LUA = Language("lua", None)
YAML = Language("yaml", None, offside=True)

EXTENSIONS: dict[str, Language] = {
    ".js": JAVASCRIPT,
    ".mjs": JAVASCRIPT,
    ".cjs": JAVASCRIPT,
    ".jsx": JAVASCRIPT,
    ".ts": TYPESCRIPT,
    ".mts": TYPESCRIPT,
    ".cts": TYPESCRIPT,
    ".tsx": TSX,
    ".py": PYTHON,
    ".pyi": PYTHON,
    ".rb": RUBY,
    ".rake": RUBY,
    ".rs": RUST,
    ".go": GO,
    ".java": JAVA,
    ".cc": CPP,
    ".cpp": CPP,
    ".cxx": CPP,
    ".hpp": CPP,
    ".hh": CPP,
    ".hxx": CPP,
    ".c": C,
    ".h": C,
    ".cs": CSHARP,
    ".php": PHP,
    ".kt": KOTLIN,
    ".kts": KOTLIN,
    ".swift": SWIFT,
    ".scala": SCALA,
    ".lua": LUA,
    ".yaml": YAML,
    ".yml": YAML,
}


def language_for_path(path: str) -> Language | None:
    """The language of a file by its extension (POSIX or Windows path), or None."""
    name = PureWindowsPath(path).name if "\\" in path else PurePosixPath(path).name
    suffix = PurePosixPath(name.lower()).suffix
    return EXTENSIONS.get(suffix)
