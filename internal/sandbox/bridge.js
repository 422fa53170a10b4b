// The bridge between user code and Go. It runs once in every fresh VM, before
// any user code, and captures every built-in it uses in this closure, so that
// user code tampering with Object, Array, Promise, JSON, Function, WeakMap or
// their prototypes cannot change what the bridge does. It evaluates to one
// control function that Go calls: control(0, fn, argsText) starts the user
// function, control(1, reject, id, message, code, tool) fails a call,
// control(2) dispatches queued calls. Results of calls go from Go straight
// to the promises' resolve functions.
//
// Every function on a path that can throw into user code is named "pml$…":
// Go drops those frames when it reports where an error happened.
(function () {
  "use strict";
  const host = globalThis.__pml_host;
  delete globalThis.__pml_host;

  // Host operations; keep in sync with host.go.
  const OP_CALL = 1, OP_LOG = 2, OP_RESULT = 3, OP_FAIL = 4, OP_RETURN = 5;

  const G = globalThis;
  const stringify = JSON.stringify, parse = JSON.parse;
  const PromiseCtor = Promise, ErrorCtor = Error, TypeErrorCtor = TypeError, RangeErrorCtor = RangeError;
  const StringCtor = String, MapCtor = Map, WeakMapCtor = WeakMap, ProxyCtor = Proxy;
  const create = Object.create, freeze = Object.freeze, defineProperty = Object.defineProperty;
  const getPrototypeOf = Object.getPrototypeOf, getOwnPropertyNames = Object.getOwnPropertyNames;
  const isArray = Array.isArray;
  const uncurry = Function.prototype.bind.bind(Function.prototype.call);
  const mapGet = uncurry(Map.prototype.get), mapSet = uncurry(Map.prototype.set);
  const weakMapGet = uncurry(WeakMap.prototype.get), weakMapSet = uncurry(WeakMap.prototype.set);
  const symbolToString = uncurry(Symbol.prototype.toString);
  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const stringSlice = uncurry(String.prototype.slice);
  const errorProto = Error.prototype, internalErrorProto = InternalError.prototype;

  // The engine's normalize and localeCompare return a failure without
  // throwing anything when they run out of memory, so code catching it got
  // a value that is no value at all (typeof "unknown"). Their wrappers throw
  // an InternalError "out of memory" instead, made now, while there is
  // memory to make it.
  const outOfMemory = new InternalError("out of memory");
  const reflectApply = Reflect.apply;
  const stringProto = String.prototype;
  function pml$oomSafe(original) {
    return function pml$builtin(...a) {
      try {
        return reflectApply(original, this, a);
      } catch (e) {
        if (typeof e === "unknown") throw outOfMemory;
        throw e;
      }
    };
  }
  for (const name of ["normalize", "localeCompare"]) {
    const wrapped = pml$oomSafe(stringProto[name]);
    Object.defineProperty(wrapped, "name", {value: name});
    Object.defineProperty(wrapped, "length", {value: stringProto[name].length});
    Object.defineProperty(stringProto, name, {value: wrapped, writable: true, enumerable: false, configurable: true});
  }

  // isIdentifier avoids RegExp, whose exec user code can replace.
  function isIdentifier(k) {
    if (k.length === 0) return false;
    for (let i = 0; i < k.length; i++) {
      const c = charCodeAt(k, i);
      const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
      if (!letter && (i === 0 || c < 48 || c > 57)) return false;
    }
    return true;
  }

  // ---- JSON serialization with a precise complaint -----------------------

  const unserializable = (v) => {
    const t = typeof v;
    return t === "function" ? "function" : t === "symbol" ? "symbol" : t === "bigint" ? "BigInt" : "";
  };

  // Thrown by the fast pass; never escapes this closure.
  const notJSON = freeze(create(null));
  function pml$fastReplacer(k, v) {
    if (unserializable(v) !== "") throw notJSON;
    return v;
  }

  // pml$locate serializes v again, tracking paths, and throws a TypeError
  // naming the first value JSON cannot hold (or whatever user code throws).
  function pml$locate(v, prefix) {
    const paths = new MapCtor(), parents = new MapCtor();
    stringify(v, function pml$replacer(k, value) {
      const holder = this, base = mapGet(paths, holder);
      let path = "$";
      if (base !== undefined) {
        if (isArray(holder)) path = base + "[" + k + "]";
        else if (isIdentifier(k)) path = base + "." + k;
        else path = base + "[" + stringify(k) + "]";
      }
      const kind = unserializable(value);
      if (kind !== "") throw new TypeErrorCtor(prefix + kind + " at " + path);
      if (value !== null && typeof value === "object") {
        for (let h = holder; h !== undefined; h = mapGet(parents, h)) {
          if (h === value) throw new TypeErrorCtor(prefix + "cycle at " + path);
        }
        mapSet(paths, value, path);
        mapSet(parents, value, holder);
      }
      return value;
    });
  }

  function pml$serialize(v, prefix) {
    try {
      const s = stringify(v, pml$fastReplacer);
      return s === undefined ? "null" : s;
    } catch (e) {
      pml$locate(v, prefix);
      if (e === notJSON) throw new TypeErrorCtor(prefix + "unknown value");
      throw e;
    }
  }

  // ---- mcp.* calls --------------------------------------------------------

  // Names an mcp namespace proxy never turns into a tool: "then" keeps
  // namespaces from looking like promises to await, and the names of
  // Object.prototype keep printing, comparing and serializing them from
  // calling tools by accident.
  const reserved = create(null);
  reserved.then = true;
  for (const k of getOwnPropertyNames(Object.prototype)) reserved[k] = true;

  const queue = create(null);   // calls waiting for a free slot, FIFO
  let queueHead = 0, queueTail = 0;
  // Error -> what Go reported. Empty when the bridge is loaded, as every
  // table keyed by objects must be: machines are copies of one loaded
  // bridge, and a copy cannot find an object key stored before it was made
  // (internal/sandbox/engine/template.go).
  const toolErrors = new WeakMapCtor();

  // One executor for the promises made here: a closure per call costs more
  // than the rest of the promise.
  let capturedResolve, capturedReject;
  function capture(resolve, reject) {
    capturedResolve = resolve;
    capturedReject = reject;
  }

  // pml$call starts a call. Go writes the JSON of plain arguments itself and
  // answers the call's promise; for anything else it answers a number,
  // and the arguments are serialized here, where an error can name what JSON
  // cannot hold.
  function pml$call(tool, label, a) {
    if (a !== undefined && a !== null && (typeof a !== "object" || isArray(a))) {
      return pml$rejected(new TypeErrorCtor(label + ": arguments must be an object"));
    }
    if (queueHead === queueTail) {
      const p = host(OP_CALL, tool, a);
      if (typeof p !== "number") return p;
    }
    let text;
    try {
      text = pml$argsText(a, label);
    } catch (e) {
      return pml$rejected(e);
    }
    const promise = new PromiseCtor(capture);
    const call = { resolve: capturedResolve, tool, text };
    if (queueHead !== queueTail || !pml$dispatch(call)) queue[queueTail++] = call;
    return promise;
  }

  function pml$rejected(e) {
    const promise = new PromiseCtor(capture);
    capturedReject(e);
    return promise;
  }

  function pml$argsText(a, label) {
    if (a === undefined || a === null) return "{}";
    const text = pml$serialize(a, label + ": arguments are not JSON-serializable: ");
    // A toJSON can turn the object into something else.
    if (charCodeAt(text, 0) !== 123) throw new TypeErrorCtor(label + ": arguments must serialize to a JSON object");
    return text;
  }

  // dispatch hands a serialized call to Go, which refuses while too many
  // calls are in flight; the call then waits in the queue, in issue order.
  function pml$dispatch(call) {
    const p = host(OP_CALL, call.tool, call.text);
    if (typeof p === "number") return false;
    call.resolve(p);
    return true;
  }

  function pml$dispatchQueued() {
    while (queueHead !== queueTail && pml$dispatch(queue[queueHead])) delete queue[queueHead++];
  }

  // pml$reject fails call id with the Error a tool failure becomes.
  function pml$reject(reject, id, message, code, tool) {
    const e = new ErrorCtor(message);
    defineProperty(e, "code", { __proto__: null, value: code, writable: true, enumerable: true, configurable: true });
    defineProperty(e, "tool", { __proto__: null, value: tool, writable: true, enumerable: true, configurable: true });
    const t = create(null);
    t.id = id;
    t.code = code;
    t.message = message;
    t.tool = tool;
    weakMapSet(toolErrors, e, t);
    reject(e);
  }

  const refuse = () => false;

  // What every lazyObject shares: its maker's target (empty and frozen),
  // the handler that refuses every change, and the descriptor each first
  // use fills in (the bridge's own object, never handed to user code).
  // Made per object they were about half the cost of a namespace's first
  // use, which every run pays for each tool it names (docs/performance.md
  // "pml stdio's first call").
  const sealed = freeze(create(null));
  const locked = freeze({
    __proto__: null,
    getPrototypeOf: () => null,
    set: refuse, defineProperty: refuse, deleteProperty: refuse, setPrototypeOf: refuse, preventExtensions: refuse,
  });
  const made = { __proto__: null, value: undefined, writable: false, enumerable: true, configurable: false };

  // lazyObject is an object that user code cannot change, whose property k
  // (a string, not a reserved name) is make(k), made on first use. It is a
  // proxy without a get trap over an object the properties are defined on,
  // so that after the first use reading one runs no JS at all; the object's
  // prototype is the proxy whose get trap makes them.
  function lazyObject(make) {
    const maker = new ProxyCtor(sealed, {
      __proto__: null,
      get(t, k) {
        if (typeof k !== "string" || reserved[k] === true) return undefined;
        const v = make(k);
        made.value = v;
        defineProperty(target, k, made);
        made.value = undefined;
        return v;
      },
    });
    const target = create(maker);
    return new ProxyCtor(target, locked);
  }

  const mcpProxy = lazyObject((ns) => lazyObject((action) => {
    const tool = ns + ":" + action, label = "mcp." + ns + "." + action;
    return function pml$action(a) { return pml$call(tool, label, a); };
  }));
  // An accessor, not a data property: the engine lets defineProperty
  // replace the value of any non-configurable data property of the global
  // object (even undefined), but checks accessors.
  defineProperty(G, "mcp", { __proto__: null, get: freeze(function mcp() { return mcpProxy; }), enumerable: false, configurable: false });

  // ---- time and randomness ------------------------------------------------

  // A run that pauses for an approval is resumed by running the code again,
  // with the calls that already happened answered from a journal. So that
  // the same code makes the same calls again, every run reads the clock
  // (Date.now, new Date(), Date()) and Math.random from Go, which, for a run
  // given a tape, keeps each value and hands a re-run the recorded ones
  // first (tape.go). Date.now and Math.random become host functions
  // themselves, with no JS wrapper: a read costs less than the built-in's
  // (BenchmarkClockLoop). They are installed once, when the bridge loads,
  // so machines copied from the template have them and a run's start pays
  // nothing for them (docs/performance.md "A taped run's start, and the
  // trace's code").
  const hostNow = globalThis.__pml_now, hostRandom = globalThis.__pml_random;
  delete globalThis.__pml_now;
  delete globalThis.__pml_random;
  const DateCtor = Date;
  const dateToString = uncurry(Date.prototype.toString);
  const reflectConstruct = Reflect.construct;

  // Date stays the same constructor for instanceof, subclasses and its
  // statics; only a read of the current time goes to Go. The prototype's
  // constructor points at the proxy, or it would hand out the original.
  function pml$dateCall() { return dateToString(new DateCtor(hostNow())); }
  function pml$dateConstruct(target, a, newTarget) {
    return reflectConstruct(DateCtor, a.length === 0 ? [hostNow()] : a, newTarget);
  }
  {
    const DateProxy = new ProxyCtor(DateCtor, freeze({ __proto__: null, apply: pml$dateCall, construct: pml$dateConstruct }));
    defineProperty(hostNow, "name", { __proto__: null, value: "now" });
    defineProperty(hostRandom, "name", { __proto__: null, value: "random" });
    defineProperty(DateCtor, "now", { __proto__: null, value: hostNow, writable: true, enumerable: false, configurable: true });
    defineProperty(DateCtor.prototype, "constructor", { __proto__: null, value: DateProxy, writable: true, enumerable: false, configurable: true });
    defineProperty(Math, "random", { __proto__: null, value: hostRandom, writable: true, enumerable: false, configurable: true });
    defineProperty(G, "Date", { __proto__: null, value: DateProxy, writable: true, enumerable: false, configurable: true });
  }

  // ---- console --------------------------------------------------------------

  function isError(v) {
    for (let p = v, i = 0; p !== null && i < 100; i++) {
      p = getPrototypeOf(p);
      if (p === errorProto) return true;
    }
    return false;
  }

  function pml$format(v) {
    switch (typeof v) {
      case "string": return v;
      case "undefined": return "undefined";
      case "symbol": return symbolToString(v);
      case "bigint": return StringCtor(v) + "n";
      case "function": return "[Function: " + (typeof v.name === "string" && v.name !== "" ? v.name : "(anonymous)") + "]";
    }
    try {
      if (v !== null && typeof v === "object" && isError(v)) return StringCtor(v.name) + ": " + StringCtor(v.message);
      const s = stringify(v);
      if (s !== undefined) return s;
    } catch (e) { /* fall through to String */ }
    try { return StringCtor(v); } catch (e) { return "[unprintable]"; }
  }

  let logsFull = false;
  function pml$log(prefix, args) {
    if (logsFull) return;
    let line = prefix;
    for (let i = 0; i < args.length; i++) line += (i === 0 ? "" : " ") + pml$format(args[i]);
    if (host(OP_LOG, line, "") !== 0) logsFull = true;
  }
  G.console = {
    log(...a) { pml$log("", a); },
    info(...a) { pml$log("[info] ", a); },
    debug(...a) { pml$log("[debug] ", a); },
    warn(...a) { pml$log("[warn] ", a); },
    error(...a) { pml$log("[error] ", a); },
  };

  // ---- running the user function -----------------------------------------

  // Records that fail stringifies have no prototype: a toJSON user code puts
  // on Object.prototype must not rewrite them.
  function message(m) {
    const d = create(null);
    d.message = pml$cap(m);
    return d;
  }

  function pml$describe(e) {
    switch (typeof e) {
      case "undefined": return message("undefined");
      case "string": return message(e);
      case "symbol": return message(symbolToString(e));
      case "bigint": return message(StringCtor(e) + "n");
      case "number": case "boolean": return message(StringCtor(e));
    }
    const d = create(null);
    if (e === null) {
      d.message = "null";
      d.null = true;
      return d;
    }
    try { if (typeof e.message === "string") d.message = e.message; } catch (x) { /* a getter threw */ }
    try { if (typeof e.name === "string") d.name = e.name; } catch (x) { /* a getter threw */ }
    try { if (typeof e.stack === "string") d.stack = e.stack; } catch (x) { /* a getter threw */ }
    if (d.message === undefined) {
      try { d.message = stringify(e); } catch (x) { /* not JSON */ }
      if (d.message === undefined) {
        try { d.message = StringCtor(e); } catch (x) { d.message = "[unprintable thrown value]"; }
      }
    }
    if (d.message === "" && d.name !== undefined) d.message = d.name;
    d.message = pml$cap(d.message);
    if (d.stack !== undefined) d.stack = pml$cap(d.stack);
    if (d.name !== undefined) d.name = pml$cap(d.name);
    return d;
  }

  // Texts of an error are cut before they are serialized, so that a thrown
  // 30 MB message costs no 30 MB of JSON; Go cuts them to the same length
  // in bytes and marks the cut (MAX_TEXT is one more than maxTextBytes in
  // failure.go, so that Go sees there was more).
  const MAX_TEXT = 8193;
  function pml$cap(s) {
    return s.length > MAX_TEXT ? stringSlice(s, 0, MAX_TEXT) : s;
  }

  function pml$fail(e) {
    try {
      const t = weakMapGet(toolErrors, e);
      if (t !== undefined) { host(OP_FAIL, "tool", stringify(t)); return; }
      if (e !== null && typeof e === "object" && getPrototypeOf(e) === internalErrorProto && e.message === "out of memory") {
        host(OP_FAIL, "memory", "");
        return;
      }
      host(OP_FAIL, "js", stringify(pml$describe(e)));
    } catch (x) {
      host(OP_FAIL, "unknown", "");
    }
  }

  // pml$run runs the user function. Go writes the JSON of a plain-data
  // result itself (as it does for call arguments); anything else is
  // serialized here, where an error can name what JSON cannot hold.
  async function pml$run(fn, a) {
    let v, text;
    try {
      v = await fn(a);
      if (host(OP_RETURN, v, "") !== 0) return;
      text = pml$serialize(v, "return value is not JSON-serializable: ");
    } catch (e) {
      pml$fail(e);
      return;
    }
    host(OP_RESULT, text, "");
  }

  function pml$start(fn, argsText) {
    const a = parse(argsText);
    defineProperty(G, "args", { __proto__: null, value: a, writable: true, enumerable: false, configurable: true });
    if (typeof fn !== "function") {
      pml$fail(new TypeErrorCtor("the code must be a function expression, got " + typeof fn));
      return;
    }
    pml$run(fn, a);
  }

  // Operations; keep in sync with jscalls.go.
  return function pml$control(op, a, b, c, d, e) {
    if (op === 0) pml$start(a, b);
    else if (op === 1) pml$reject(a, b, c, d, e);
    else pml$dispatchQueued();
  };
})()
