#!/usr/bin/env python3
"""Build discover_public/ (servers/*.json and tasks.json) from a snapshot of
Accenture/mcp-bench, statically: no server is run and nothing is installed.

Run (python3 >= 3.9, standard library only), from this directory:

    python3 extract.py /work/.mirror/Accenture+mcp-bench/repo [COMMIT]

where the first argument is a clone (bare or not) of
https://github.com/Accenture/mcp-bench and COMMIT defaults to its HEAD. Every
file is read with `git show COMMIT:path`, so the output depends on the commit
only. See README.md for what is extracted and how.

Tools come from the servers' source:
  - Python: functions decorated with `@<x>.tool(...)` (FastMCP), their
    docstring (cleaned like inspect.cleandoc) as description and their typed
    parameters as a JSON schema; low-level `Tool(name=, description=,
    inputSchema=)` literals.
  - TypeScript / JavaScript: `<x>.tool(name, description, {zod shape}, fn)`
    calls, `{name, description, inputSchema}` object literals (JSON schema or
    `zodToJsonSchema(zodObject)`), and the per-server file layouts of the
    Met Museum and Google Maps servers. zod chains are turned into JSON
    schema by a small interpreter (string, number, boolean, enum, array,
    object, union, optional, default, describe, int, min/max).
"""

import ast
import json
import os
import re
import subprocess
import sys

REPO = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/Accenture+mcp-bench/repo"
COMMIT = sys.argv[2] if len(sys.argv) > 2 else None
OUT = os.path.dirname(os.path.abspath(__file__))


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], check=True, capture_output=True, text=True).stdout


if COMMIT is None:
    COMMIT = git("rev-parse", "HEAD").strip()


def show(path):
    return git("show", f"{COMMIT}:{path}")


def namespace(server_name):
    return re.sub(r"[^a-z0-9]+", "-", server_name.lower()).strip("-")


# MCP-Bench server name -> (folder under mcp_servers, language, files that
# define tools, in registration order). Folders and entry points follow
# mcp_servers/commands.json.
S = "mcp_servers/"
SERVERS = {
    "Bibliomantic": ("bibliomantic-mcp-server", "py", ["enhanced_bibliomantic_server.py"]),
    "BioMCP": ("biomcp", "py", ["src/biomcp/core.py", "src/biomcp/router.py", "src/biomcp/thinking_tool.py",
                                "src/biomcp/individual_tools.py"]),
    "Call for Papers": ("call-for-papers-mcp", "py", ["call-for-papers-mcp-main/server.py"]),
    "Car Price Evaluator": ("car-price-mcp-main", "py", ["server.py"]),
    "Context7": ("context7-mcp", "ts", ["src/index.ts"]),
    "DEX Paprika": ("dexpaprika-mcp", "ts", ["src/index.js"]),
    "FruityVice": ("fruityvice-mcp", "py", ["server.py"]),
    "Game Trends": ("game-trends-mcp", "py", ["server.py"]),
    "Google Maps": ("mcp-google-map", "gmaps", ["src/index.ts"]),
    "Huge Icons": ("hugeicons-mcp-server", "ts", ["src/index.ts"]),
    "Hugging Face": ("huggingface-mcp-server", "py", ["src/huggingface/server.py"]),
    "Math MCP": ("math-mcp", "ts", ["src/index.ts"]),
    "Medical Calculator": ("medcalc", "py", ["medcalc/__main__.py"]),
    "Metropolitan Museum": ("metmuseum-mcp", "met", ["src/index.ts"]),
    "Movie Recommender": ("movie-recommender-mcp", "py", ["movie-reccomender-mcp/server.py"]),
    "NASA Data": ("nasa-mcp", "py", ["src/nasa_mcp/server.py"]),
    "National Parks": ("mcp-server-nationalparks", "ts", ["src/server.ts", "src/schemas.ts"]),
    "NixOS": ("mcp-nixos", "py", ["mcp_nixos/server.py"]),
    "OKX Exchange": ("okx-mcp", "ts", ["src/index.ts"]),
    "OSINT Intelligence": ("mcp-osint-server", "py", ["mcp_osint_server/mcp_osint_server/main.py"]),
    "OpenAPI Explorer": ("openapi-mcp-server", "ts", ["index.js"]),
    "Paper Search": ("paper-search-mcp", "py", ["paper_search_mcp/server.py"]),
    "Reddit": ("mcp-reddit", "py", ["src/mcp_reddit/reddit_fetcher.py"]),
    "Scientific Computing": ("scientific_computation_mcp", "py", ["src/server.py", "src/linear_algebra.py",
                                                                  "src/vector_calculus.py", "src/visualization.py"]),
    "Time MCP": ("time-mcp", "py", ["src/mcp_server_time/server.py"]),
    "Unit Converter": ("unit-converter-mcp", "py", ["src/unit_converter_mcp/server.py"]),
    "Weather Data": ("weather_mcp", "py", ["server.py"]),
    "Wikipedia": ("wikipedia-mcp", "py", ["wikipedia_mcp/server.py"]),
}


# ───────────────────────────── Python ─────────────────────────────

class PyEnv:
    """Module-level names of a server's files: assignments and classes."""

    def __init__(self, trees):
        self.assign, self.classes = {}, {}
        for tree in trees:
            for node in tree.body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    self.assign[node.targets[0].id] = node.value
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                    self.assign[node.target.id] = node.value
                elif isinstance(node, ast.ClassDef):
                    self.classes[node.name] = node


def py_value(node, env):
    """A JSON value for a literal-ish expression; unresolved names are kept as
    source text in braces (f-strings) or raise ValueError."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = ""
        for v in node.values:
            if isinstance(v, ast.Constant):
                out += v.value
            else:
                try:
                    out += str(py_value(v.value, env))
                except ValueError:
                    out += "{" + ast.unparse(v.value) + "}"
        return out
    if isinstance(node, ast.Dict):
        return {py_value(k, env): py_value(v, env) for k, v in zip(node.keys, node.values)}
    if isinstance(node, (ast.List, ast.Tuple)):
        return [py_value(e, env) for e in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -py_value(node.operand, env)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return py_value(node.left, env) + py_value(node.right, env)
    if isinstance(node, ast.Name):
        if node.id in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.id]
        if node.id in env.assign:
            return py_value(env.assign[node.id], env)
    if isinstance(node, ast.Attribute) and node.attr == "value" and isinstance(node.value, ast.Attribute) \
            and isinstance(node.value.value, ast.Name) and node.value.value.id in env.classes:
        for st in env.classes[node.value.value.id].body:  # Enum member
            if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.value.attr for t in st.targets):
                return py_value(st.value, env)
    raise ValueError(ast.unparse(node))


SIMPLE = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "dict": "object",
          "Dict": "object", "list": "array", "List": "array", "tuple": "array", "Tuple": "array",
          "Any": None, "object": None, "Sequence": "array", "Mapping": "object", "set": "array"}


def py_type(node, env, depth=0):
    """JSON schema of a type annotation, and whether it admits None."""
    if node is None or depth > 10:
        return {}, False
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # "quoted" annotation
        return py_type(ast.parse(node.value, mode="eval").body, env, depth + 1)
    if isinstance(node, ast.Constant) and node.value is None:
        return {"type": "null"}, True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return union([node.left, node.right], env, depth)
    if isinstance(node, ast.Name):
        if node.id in SIMPLE:
            t = SIMPLE[node.id]
            return ({"type": t} if t else {}), False
        if node.id in env.assign:
            return py_type(env.assign[node.id], env, depth + 1)
        if node.id in env.classes:  # Enum or model
            cls = env.classes[node.id]
            bases = [ast.unparse(b) for b in cls.bases]
            if any("Enum" in b for b in bases):
                vals = []
                for st in cls.body:
                    if isinstance(st, ast.Assign):
                        try:
                            vals.append(py_value(st.value, env))
                        except ValueError:
                            pass
                t = "string" if all(isinstance(v, str) for v in vals) else None
                return ({"type": t, "enum": vals} if t else {"enum": vals}), False
            return {"type": "object"}, False
        return {}, False
    if isinstance(node, ast.Attribute):
        return py_type(ast.Name(id=node.attr), env, depth + 1)
    if isinstance(node, ast.Subscript):
        base = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", "")
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base == "Optional":
            s, _ = py_type(args[0], env, depth + 1)
            return s, True
        if base == "Union":
            return union(args, env, depth)
        if base == "Annotated":
            s, nullable = py_type(args[0], env, depth + 1)
            s = dict(s)
            for extra in args[1:]:
                if isinstance(extra, ast.Call) and getattr(extra.func, "id", getattr(extra.func, "attr", "")) == "Field":
                    s.update(field_kwargs(extra, env))
            return s, nullable
        if base == "Literal":
            vals = [py_value(a, env) for a in args]
            types = {type(v) for v in vals}
            s = {"enum": vals}
            if types == {str}:
                s["type"] = "string"
            elif types <= {int}:
                s["type"] = "integer"
            return s, False
        if base in ("list", "List", "Sequence", "set", "tuple", "Tuple"):
            items, _ = py_type(args[0], env, depth + 1)
            return ({"type": "array", "items": items} if items else {"type": "array"}), False
        if base in ("dict", "Dict", "Mapping"):
            return {"type": "object"}, False
        return {}, False
    return {}, False


def union(args, env, depth):
    parts, nullable = [], False
    for a in args:
        if isinstance(a, ast.BinOp) and isinstance(a.op, ast.BitOr):
            s, n = union([a.left, a.right], env, depth)
            nullable |= n
            parts.extend(s.get("anyOf", [s]) if s else [])
            continue
        s, n = py_type(a, env, depth + 1)
        if s.get("type") == "null":
            nullable = True
            continue
        nullable |= n
        if s:
            parts.append(s)
    if len(parts) == 1:
        return parts[0], nullable
    return ({"anyOf": parts} if parts else {}), nullable


FIELD_KEYS = {"description": "description", "ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum",
              "lt": "exclusiveMaximum", "min_length": "minLength", "max_length": "maxLength",
              "pattern": "pattern", "default": "default"}


def field_kwargs(call, env):
    out = {}
    for kw in call.keywords:
        if kw.arg in FIELD_KEYS:
            try:
                out[FIELD_KEYS[kw.arg]] = py_value(kw.value, env)
            except ValueError:
                pass
    if call.args and not (isinstance(call.args[0], ast.Constant) and call.args[0].value is ...):
        try:
            out["default"] = py_value(call.args[0], env)
        except ValueError:
            pass
    return out


def py_function_schema(fn, env):
    props, required = {}, []
    a = fn.args
    params = a.posonlyargs + a.args + a.kwonlyargs
    defaults = [None] * (len(a.posonlyargs + a.args) - len(a.defaults)) + list(a.defaults) + list(a.kw_defaults)
    for p, d in zip(params, defaults):
        ann = ast.unparse(p.annotation) if p.annotation is not None else ""
        if p.arg in ("self", "cls") or "Context" in ann:
            continue
        s, _ = py_type(p.annotation, env)
        s = dict(s)
        has_default = d is not None
        if isinstance(d, ast.Call) and getattr(d.func, "id", getattr(d.func, "attr", "")) == "Field":
            extra = field_kwargs(d, env)
            has_default = "default" in extra
            s.update(extra)
        elif d is not None:
            try:
                s["default"] = py_value(d, env)
            except ValueError:
                pass
        props[p.arg] = s
        if not has_default:
            required.append(p.arg)
    schema = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


def deco_tool(dec):
    """The decorator's call if it registers an MCP tool (@x.tool / @x.tool(...))."""
    f = dec.func if isinstance(dec, ast.Call) else dec
    if isinstance(f, ast.Attribute) and f.attr == "tool":
        return dec if isinstance(dec, ast.Call) else ast.Call(func=f, args=[], keywords=[])
    return None


def python_server(folder, files):
    trees = [ast.parse(show(S + folder + "/" + f)) for f in files]
    # names (type aliases, enums) resolve in the tool files first, then in
    # the server's other Python modules
    others = [p for p in git("ls-tree", "-r", "--name-only", COMMIT, S + folder).split("\n")
              if p.endswith(".py") and p[len(S + folder) + 1:] not in files and "test" not in p]
    env_trees = list(trees)
    for p in others:
        try:
            env_trees.append(ast.parse(show(p)))
        except SyntaxError:
            pass
    env = PyEnv(env_trees)
    tools, info = [], {"name": "", "instructions": ""}
    for tree in trees:
        nodes = sorted((n for n in ast.walk(tree) if hasattr(n, "lineno")), key=lambda n: (n.lineno, n.col_offset))
        for node in nodes:
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in ("FastMCP", "Server") \
                    and not info["name"]:
                try:
                    if node.args:
                        info["name"] = py_value(node.args[0], env)
                    for kw in node.keywords:
                        if kw.arg == "name":
                            info["name"] = py_value(kw.value, env)
                        if kw.arg == "instructions":
                            info["instructions"] = py_value(kw.value, env)
                except ValueError:
                    pass
                if getattr(node.func, "id", getattr(node.func, "attr", "")) == "FastMCP" and not info["name"]:
                    info["name"] = "FastMCP"  # FastMCP's default name
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for dec in node.decorator_list:
                    call = deco_tool(dec)
                    if call is None:
                        continue
                    kws = {kw.arg: py_value(kw.value, env) for kw in call.keywords if kw.arg in ("name", "description")}
                    if call.args:
                        kws.setdefault("name", py_value(call.args[0], env))
                    doc = ast.get_docstring(node) or ""
                    tools.append({"name": kws.get("name") or node.name,
                                  "description": kws.get("description") or doc,
                                  "inputSchema": py_function_schema(node, env)})
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Tool":
                kw = {k.arg: k.value for k in node.keywords}
                if "name" in kw and "inputSchema" in kw:
                    t = {"name": py_value(kw["name"], env), "description": py_value(kw["description"], env)
                         if "description" in kw else "", "inputSchema": py_value(kw["inputSchema"], env)}
                    if "outputSchema" in kw:
                        t["outputSchema"] = py_value(kw["outputSchema"], env)
                    tools.append(t)
    return tools, info


# ────────────────────────── JavaScript / TypeScript ──────────────────────────

TOKEN = re.compile(r"""
    (?P<ws>\s+|//[^\n]*|/\*.*?\*/)
  | (?P<tmpl>`(?:\\.|\$\{(?:[^{}]|\{[^{}]*\})*\}|[^`\\])*`)
  | (?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<num>\d+(?:\.\d+)?(?:e[+-]?\d+)?)
  | (?P<id>[A-Za-z_$][\w$]*)
  | (?P<punct>=>|\.\.\.|\?\.|[{}()\[\],:;.=+\-*/<>!?&|%])
""", re.S | re.X)


def tokenize(src):
    out, pos = [], 0
    while pos < len(src):
        m = TOKEN.match(src, pos)
        if not m:
            out.append(("punct", src[pos]))
            pos += 1
            continue
        pos = m.end()
        if m.lastgroup != "ws":
            out.append((m.lastgroup, m.group()))
    return out


def js_unescape(s):
    return json.loads('"' + s.replace('"', '\\"').replace("\\'", "'").replace("\\`", "`").replace("\\$", "$")
                      .replace("\n", "\\n").replace("\t", "\\t") + '"')


class Opaque:
    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return "Opaque(%s)" % self.text[:40]


class Parser:
    """A recursive-descent parser for the JS expressions tools are defined
    with: literals, templates, objects, arrays, identifiers, member access,
    calls, `+`, and arrow functions (kept opaque)."""

    def __init__(self, toks, i=0):
        self.t, self.i = toks, i

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else ("eof", "")

    def take(self, v=None):
        tok = self.peek()
        if v is not None and tok[1] != v:
            raise SyntaxError("want %r got %r at %d" % (v, tok, self.i))
        self.i += 1
        return tok

    def skip_balanced(self):
        """Skip one balanced bracket group starting at the current token."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        depth = []
        while True:
            k, v = self.take()
            if k == "eof":
                return
            if v in pairs:
                depth.append(pairs[v])
            elif depth and v == depth[-1]:
                depth.pop()
                if not depth:
                    return

    def skip_expr(self):
        """Skip an expression (an arrow function's body) up to the next
        top-level , ) ] } or ;."""
        while self.peek()[1] not in (",", ")", "]", "}", ";") and self.peek()[0] != "eof":
            if self.peek()[1] in ("(", "[", "{"):
                self.skip_balanced()
            else:
                self.take()

    def expr(self):
        # arrow function: (args) => ... | x => ...
        if self.peek()[1] == "(" or self.peek()[1] == "async":
            j = self.i + (1 if self.peek()[1] == "async" else 0)
            save = self.i
            self.i = j
            if self.peek()[1] == "(":
                self.skip_balanced()
                if self.peek()[1] == ":":  # return type annotation
                    while self.peek()[1] not in ("=>", "eof"):
                        self.take()
                if self.peek()[1] == "=>":
                    self.take()
                    self.skip_expr()
                    return Opaque("function")
            self.i = save
        if self.peek()[0] == "id" and self.peek(1)[1] == "=>":
            self.take(), self.take()
            self.skip_expr()
            return Opaque("function")
        left = self.unary()
        while True:
            a, b = self.peek()[1], self.peek(1)[1]
            if a == "+":
                self.take()
                left = ("+", left, self.unary())
            elif (a, b) in (("|", "|"), ("?", "?")):
                self.take(), self.take()
                left = ("or", left, self.unary())
            else:
                break
        if self.peek()[1] == "as":  # TS cast
            self.take()
            self.take()
        return left

    def unary(self):
        if self.peek()[1] == "-":
            self.take()
            return ("neg", self.postfix())
        if self.peek()[1] == "new":
            self.take()
        return self.postfix()

    def postfix(self):
        node = self.primary()
        while True:
            v = self.peek()[1]
            if v in (".", "?."):
                self.take()
                node = ("member", node, self.take()[1])
            elif v == "(":
                self.take()
                args = []
                while self.peek()[1] != ")":
                    args.append(self.expr())
                    if self.peek()[1] == ",":
                        self.take()
                self.take(")")
                node = ("call", node, args)
            elif v == "[" :
                self.take()
                idx = self.expr()
                self.take("]")
                node = ("index", node, idx)
            elif v == "!" and self.peek(1)[1] in (".", ")", ",", ";"):
                self.take()
            else:
                return node

    def primary(self):
        k, v = self.take()
        if k == "str":
            return ("lit", js_unescape(v[1:-1]))
        if k == "tmpl":
            return ("tmpl", v[1:-1])
        if k == "num":
            return ("lit", float(v) if "." in v or "e" in v else int(v))
        if k == "id":
            if v in ("true", "false", "null", "undefined"):
                return ("lit", {"true": True, "false": False, "null": None, "undefined": None}[v])
            return ("id", v)
        if v == "(":
            e = self.expr()
            self.take(")")
            return e
        if v == "[":
            items = []
            while self.peek()[1] != "]":
                items.append(self.expr())
                if self.peek()[1] == ",":
                    self.take()
            self.take("]")
            return ("array", items)
        if v == "{":
            props = []
            while self.peek()[1] != "}":
                if self.peek()[1] == "...":
                    self.take()
                    props.append(("...", self.expr()))
                else:
                    kk, key = self.take()
                    if kk == "str":
                        key = js_unescape(key[1:-1])
                    if self.peek()[1] == ":":
                        self.take()
                        props.append((key, self.expr()))
                    elif self.peek()[1] == "(":  # method
                        self.skip_balanced()
                        self.skip_balanced()
                    else:  # shorthand
                        props.append((key, ("id", key)))
                if self.peek()[1] == ",":
                    self.take()
            self.take("}")
            return ("object", props)
        raise SyntaxError("unexpected %r at %d" % (v, self.i))


class JSEnv:
    """Top-level `const X = expr` and class fields `name = expr` of a
    server's files, parsed lazily."""

    def __init__(self, sources):
        self.defs = {}
        for src in sources:
            toks = tokenize(src)
            for i, (k, v) in enumerate(toks):
                if v in ("const", "let", "var") and i + 2 < len(toks) and toks[i + 1][0] == "id":
                    j = i + 2
                    if toks[j][1] == ":":  # type annotation
                        while j < len(toks) and toks[j][1] not in ("=", ";"):
                            j += 1
                    if j < len(toks) and toks[j][1] == "=":
                        self.defs.setdefault(toks[i + 1][1], (toks, j + 1))
                if v == "readonly" and toks[i + 1][0] == "id":  # class field
                    j = i + 2
                    if toks[j][1] == ":":
                        while toks[j][1] not in ("=", ";"):
                            j += 1
                    if toks[j][1] == "=":
                        self.defs.setdefault("this." + toks[i + 1][1], (toks, j + 1))

    def get(self, name):
        if name not in self.defs:
            raise KeyError(name)
        toks, i = self.defs[name]
        return Parser(toks, i).expr()


class Zod:
    def __init__(self, schema, optional=False, shape=None):
        self.schema, self.optional, self.shape = schema, optional, shape


def js_eval(node, env):
    kind = node[0] if isinstance(node, tuple) else None
    if isinstance(node, Opaque):
        return node
    if kind == "lit":
        return node[1]
    if kind == "tmpl":
        def sub(m):
            try:
                v = js_eval(Parser(tokenize(m.group(1))).expr(), env)
                if isinstance(v, (str, int, float)):
                    return str(v)
            except (KeyError, SyntaxError, ValueError):
                pass
            return m.group(0)  # unresolved (runtime) value: kept as source
        s = re.sub(r"\$\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}", sub, node[1])
        return js_unescape(s.replace("\\n", "\n").replace("\n", "\\n")) if "\\" in s else s
    if kind == "+":
        a, b = js_eval(node[1], env), js_eval(node[2], env)
        return (str(a) if isinstance(a, (int, float)) else a) + (str(b) if isinstance(b, (int, float)) else b)
    if kind == "neg":
        return -js_eval(node[1], env)
    if kind == "or":
        return js_eval(node[1], env)
    if kind == "array":
        return [js_eval(e, env) for e in node[1]]
    if kind == "object":
        out = {}
        for k, v in node[1]:
            if k == "...":
                out.update(js_eval(v, env))
            else:
                out[k] = js_eval(v, env)
        return out
    if kind == "id":
        if node[1] == "z":
            return "z"
        return js_eval(env.get(node[1]), env)
    if kind == "member":
        obj, prop = node[1], node[2]
        if obj == ("id", "this"):
            return js_eval(env.get("this." + prop), env)
        base = js_eval(obj, env)
        if isinstance(base, Zod) and prop == "shape":
            return base.shape
        if isinstance(base, dict) and prop in base:
            return base[prop]
        return ("method", base, prop)
    if kind == "call":
        fn = node[1]
        if fn[0] == "id" and fn[1] == "zodToJsonSchema":
            return zod_json(js_eval(node[2][0], env))
        if fn[0] == "member":
            base = js_eval(fn[1], env)
            args = node[2]
            if base == "z" or isinstance(base, Zod):
                return zod_call(base, fn[2], args, env)
        raise ValueError("cannot evaluate call %r" % (fn,))
    raise ValueError("cannot evaluate %r" % (node,))


def zod_call(base, method, args, env):
    if base == "z":
        if method in ("string", "number", "boolean", "any", "unknown", "null", "date"):
            t = {"string": "string", "number": "number", "boolean": "boolean", "null": "null", "date": "string"}.get(method)
            return Zod({"type": t} if t else {})
        if method == "enum":
            vals = js_eval(args[0], env)
            return Zod({"type": "string", "enum": vals})
        if method == "literal":
            v = js_eval(args[0], env)
            return Zod({"type": "string" if isinstance(v, str) else "number", "const": v})
        if method == "array":
            return Zod({"type": "array", "items": zod_schema(js_eval(args[0], env))})
        if method == "object":
            shape = js_eval(args[0], env)
            return Zod(zod_object(shape), shape=shape)
        if method == "record":
            return Zod({"type": "object", "additionalProperties": zod_schema(js_eval(args[-1], env))})
        if method == "union":
            return Zod({"anyOf": [zod_schema(x) for x in js_eval(args[0], env)]})
        if method == "preprocess":
            return js_eval(args[1], env)
        raise ValueError("z." + method)
    s = dict(base.schema)
    if method == "optional" or method == "nullish":
        return Zod(s, True, base.shape)
    if method == "nullable":
        return Zod(s, base.optional, base.shape)
    if method == "default":
        s["default"] = js_eval(args[0], env)
        return Zod(s, True, base.shape)
    if method == "describe":
        s["description"] = js_eval(args[0], env)
        return Zod(s, base.optional, base.shape)
    if method == "int":
        s["type"] = "integer"
    elif method in ("min", "max", "gte", "lte"):
        v = js_eval(args[0], env)
        lo = method in ("min", "gte")
        key = {"string": ("minLength", "maxLength"), "array": ("minItems", "maxItems")}.get(
            s.get("type"), ("minimum", "maximum"))[0 if lo else 1]
        s[key] = v
    elif method == "positive":
        s["exclusiveMinimum"] = 0
    elif method == "nonnegative":
        s["minimum"] = 0
    elif method == "url":
        s["format"] = "uri"
    elif method == "email":
        s["format"] = "email"
    # transform, refine, regex, length, ...: no schema change
    return Zod(s, base.optional, base.shape)


def zod_schema(z):
    if isinstance(z, Zod):
        return z.schema
    raise ValueError("not a zod schema: %r" % (z,))


def zod_object(shape):
    props, required = {}, []
    for k, v in shape.items():
        props[k] = zod_schema(v)
        if not v.optional:
            required.append(k)
    s = {"type": "object", "properties": props}
    if required:
        s["required"] = required
    s["additionalProperties"] = False
    return s


def zod_json(z):
    return zod_schema(z)


def shape_schema(v):
    """The input schema of a `.tool(name, description, shape)` shape:
    an object of zod schemas (the MCP SDK wraps it in z.object)."""
    if isinstance(v, Zod):
        return v.schema
    return zod_object(v)


def find_calls(toks, method):
    """Indices of `. method (` in toks."""
    return [i for i in range(len(toks) - 2)
            if toks[i][1] == "." and toks[i + 1][1] == method and toks[i + 2][1] == "("]


def js_server(folder, files, kind):
    sources = [show(S + folder + "/" + f) for f in files]
    extra = []
    if kind == "met":
        extra = [show(S + folder + "/src/tools/" + f) for f in
                 ("ListDepartmentsTool.ts", "SearchMuseumObjectsTool.ts", "GetObjectTool.ts")]
    if kind == "gmaps":
        tools = []
        cfg = show(S + folder + "/src/config.ts")
        for cls, path in re.findall(r'import \{ (\w+), \w+ \} from "\./tools/maps/(\w+)\.js"', cfg):
            pos = cfg.index("name: %s.NAME" % cls)
            if pos < 0:
                continue
            src = show(S + folder + "/src/tools/maps/%s.ts" % path)
            env = JSEnv([src])
            tools.append((cfg.index("name: %s.NAME" % cls), {
                "name": js_eval(env.get("NAME"), env), "description": js_eval(env.get("DESCRIPTION"), env),
                "inputSchema": shape_schema(js_eval(env.get("SCHEMA"), env))}))
        return [t for _, t in sorted(tools, key=lambda x: x[0])], {"name": "MCP-Server", "instructions": ""}
    tools = []
    info = {"name": "", "instructions": ""}
    if kind == "met":
        for src in extra:
            env = JSEnv([src])
            # the server registers inputSchema.shape, which the SDK wraps in z.object
            tools.append({"name": js_eval(env.get("this.name"), env),
                          "description": js_eval(env.get("this.description"), env),
                          "inputSchema": zod_object(js_eval(("member", env.get("this.inputSchema"), "shape"), env))})
        m = re.search(r"name: '([^']+)'", sources[0])
        info["name"] = m.group(1) if m else ""
        return tools, info
    env = JSEnv(sources)
    for src in sources:
        m = re.search(r"""new (?:McpServer|Server)\(\s*\{\s*name:\s*["']([^"']+)["']""", src)
        if m and not info["name"]:
            info["name"] = m.group(1)
        toks = tokenize(src)
        for i in find_calls(toks, "tool"):
            p = Parser(toks, i + 3)
            args = []
            while p.peek()[1] != ")":
                args.append(p.expr())
                if p.peek()[1] == ",":
                    p.take()
            vals = [js_eval(a, env) if not isinstance(a, Opaque) else a for a in args[:-1]]
            name = vals[0]
            desc = vals[1] if len(vals) > 1 and isinstance(vals[1], str) else ""
            shape = next((v for v in vals[1:] if isinstance(v, (dict, Zod))), {})
            tools.append({"name": name, "description": desc, "inputSchema": shape_schema(shape)})
        # {name: ..., description: ..., inputSchema: ...} object literals
        for i in range(len(toks) - 2):
            if toks[i][1] == "{" and toks[i + 1][1] == "name" and toks[i + 2][1] == ":":
                p = Parser(toks, i)
                try:
                    obj = p.primary()
                except SyntaxError:
                    continue
                keys = [k for k, _ in obj[1]]
                if "inputSchema" not in keys:
                    continue
                t = js_eval(obj, env)
                tool = {"name": t["name"], "description": t.get("description", ""), "inputSchema": t["inputSchema"]}
                if "outputSchema" in t:
                    tool["outputSchema"] = t["outputSchema"]
                tools.append(tool)
    return tools, info


# ─────────────────────────────── main ───────────────────────────────

def package_version(folder, kind):
    for f in (("pyproject.toml",) if kind == "py" else ("package.json",)):
        try:
            src = show(S + folder + "/" + f)
        except subprocess.CalledProcessError:
            continue
        if f == "package.json":
            d = json.loads(src)
            if d.get("name"):
                return d["name"], d.get("version") or COMMIT
        else:
            sect = re.search(r"^\[(?:project|tool\.poetry)\]\n(.*?)(?=^\[|\Z)", src, re.S | re.M)
            if sect:
                n = re.search(r'^name\s*=\s*"([^"]+)"', sect.group(1), re.M)
                v = re.search(r'^version\s*=\s*"([^"]+)"', sect.group(1), re.M)
                if n:
                    return n.group(1), v.group(1) if v else COMMIT
    return folder, COMMIT


def build_servers():
    commands = json.loads(show(S + "commands.json"))
    assert set(commands) == set(SERVERS), set(commands) ^ set(SERVERS)
    os.makedirs(os.path.join(OUT, "servers"), exist_ok=True)
    servers = {}
    for sname, (folder, kind, files) in sorted(SERVERS.items()):
        if kind == "py":
            tools, info = python_server(folder, files)
        else:
            tools, info = js_server(folder, files, kind)
        seen, kept = set(), []
        for t in tools:  # FastMCP keeps the first tool of a name ("Tool already exists")
            if t["name"] in seen:
                print("%s: duplicate tool %s, first kept" % (sname, t["name"]), file=sys.stderr)
                continue
            seen.add(t["name"])
            kept.append(t)
        tools = kept
        pkg, ver = package_version(folder, kind)
        ns = namespace(sname)
        out = {"package": pkg, "version": ver, "name": ns, "instructions": info["instructions"],
               "serverInfo": {"name": info["name"], "title": sname}, "tools": tools}
        with open(os.path.join(OUT, "servers", ns + ".json"), "w") as f:
            json.dump(out, f, indent=1, ensure_ascii=False)
            f.write("\n")
        servers[sname] = out
        print("%-22s %-28s %3d tools  %s" % (ns, pkg, len(tools), "" if all(t["description"] for t in tools)
                                             else "EMPTY DESCRIPTIONS: " + ",".join(t["name"] for t in tools if not t["description"])),
              file=sys.stderr)
    return servers


TASK_FILES = ["tasks/mcpbench_tasks_single_runner_format.json",
              "tasks/mcpbench_tasks_multi_2server_runner_format.json",
              "tasks/mcpbench_tasks_multi_3server_runner_format.json"]


PLAIN = re.compile(r"[a-z]+")  # tool names that are plain English words: add, mean, search, think, ...
ARROW = r"(?:\s*(?:→|->|➔|⇒|/|,|\+|\band\b|\bor\b)\s*)"


def task_tools(text, task_servers, servers):
    """The distinct tools text names, in order of first mention: as
    "Server Name:tool", or, for a tool of one of the task's servers, its bare
    name as a whole word. A bare name that is a plain English word (search,
    mean, round, ...) counts only in a tool-like context: after its server's
    name ("BioMCP search"), before "(" or " tool", or chained by an arrow, a
    slash, a comma, "and" or "or" to another tool name of the task's servers.
    Returns (needs, "Server:tool" mentions of no such tool)."""
    hits, unknown = [], []
    by_name = {}
    for sname in task_servers:
        for t in servers[sname]["tools"]:
            by_name.setdefault(t["name"], []).append(sname)
    all_names = {s: {t["name"] for t in servers[s]["tools"]} for s in servers}
    server_re = "|".join(re.escape(s) for s in sorted(servers, key=len, reverse=True))
    for m in re.finditer(r"(%s)\s*:\s*([A-Za-z_][\w\-]*)" % server_re, text):
        sname, tool = m.group(1), m.group(2)
        if tool in all_names[sname]:
            hits.append((m.start(), [sname], tool))
        elif sname in task_servers:
            unknown.append(sname + ":" + tool)
    names_re = "|".join(re.escape(n) for n in sorted(by_name, key=len, reverse=True))
    for name, snames in by_name.items():
        for m in re.finditer(r"(?<![\w\-:.])%s(?![\w\-])" % re.escape(name), text):
            if PLAIN.fullmatch(name):
                before, after = text[:m.start()], text[m.end():]
                ok = (re.search(r"(%s)\s+$" % "|".join(re.escape(s) for s in snames), before)
                      or re.match(r"\s*\(|\s+tool", after)
                      or re.match(ARROW + r"(%s)(?![\w\-])" % names_re, after)
                      or re.search(r"(?<![\w\-])(%s)" % names_re + ARROW + "$", before))
                if not ok:
                    continue
            hits.append((m.start(), snames, name))
    needs, seen = [], set()
    for _, snames, tool in sorted(hits, key=lambda h: h[0]):
        alts = snames if len(snames) == 1 else [s for s in task_servers if tool in all_names[s]]
        need = "|".join(namespace(s) + ":" + tool for s in alts)
        key = tool if len(alts) > 1 else need
        if key in seen:
            continue
        seen.add(key)
        needs.append(need)
    return needs, unknown


def build_tasks(servers):
    tasks, dropped, stats = [], [], {}
    for tf in TASK_FILES:
        d = json.loads(show(tf))
        n = 0
        for group in d["server_tasks"]:
            task_servers = group["server_name"].split("+")
            for s in task_servers:
                assert s in servers, s
            for task in group["tasks"]:
                n += 1
                needs, unknown = task_tools(task.get("dependency_analysis") or "", task_servers, servers)
                if not needs:  # dependency_analysis missing or naming no tool
                    needs, unknown = task_tools(task.get("task_description") or "", task_servers, servers)
                    stats["from_task_description"] = stats.get("from_task_description", 0) + 1
                query = (task.get("fuzzy_description") or "").strip()
                if not needs or not query or unknown:
                    dropped.append((task["task_id"], "no query" if not query else
                                    "unknown tools %s" % unknown if unknown else "no tool named"))
                    continue
                tasks.append({"query": query, "tools": needs, "held_out": False})
        stats[tf] = n
    with open(os.path.join(OUT, "tasks.json"), "w") as f:
        json.dump(tasks, f, indent=1, ensure_ascii=False)
        f.write("\n")
    return tasks, dropped, stats


def main():
    servers = build_servers()
    tasks, dropped, stats = build_tasks(servers)
    print("commit", COMMIT, file=sys.stderr)
    print("servers", len(servers), "tools", sum(len(s["tools"]) for s in servers.values()), file=sys.stderr)
    print("tasks", len(tasks), "dropped", len(dropped), stats, file=sys.stderr)
    for tid, why in dropped:
        print("  dropped", tid, why, file=sys.stderr)


if __name__ == "__main__":
    main()
