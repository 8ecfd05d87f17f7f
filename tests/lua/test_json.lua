-- runara.json: decode and encode over the runtime's JSON parser; null, arrays and objects, the
-- errors (located at the caller's line), and served_models' reading of a /v1/models answer.
local t = require("t")
local J = runara.json
local served = require("runara.served_models")

t.test("decode: values, null as runara.json.null, [] and {} told apart, the last duplicate key wins", function()
  local v = J.decode('{"a": [1, 2.5, null, {"b": "\\u00e9\\n"}], "e": [], "o": {}, "n": null, "d": 1, "d": 2}')
  t.eq(#v.a, 4); t.eq(v.a[1], 1); t.eq(v.a[2], 2.5); t.eq(v.a[3], J.null); t.eq(v.a[4].b, "é\n")
  t.eq(v.n, J.null); t.eq(v.missing, nil); t.eq(v.d, 2)
  t.eq(J.is_array(v.a), true); t.eq(J.is_array(v.e), true); t.eq(J.is_array(v.o), false); t.eq(J.is_array(v), false)
  t.eq(J.decode("true"), true); t.eq(J.decode(' "x" '), "x"); t.eq(J.decode("-0.5e2"), -50); t.eq(J.decode("null"), J.null)
end)

t.test("encode: keys sorted, null and empty arrays kept, indent; a round trip gives the same text", function()
  local text = '{"a":[1,2.5,null,{"b":"é"}],"e":[],"n":null,"o":{}}'
  t.eq(J.encode(J.decode(text)), text)
  t.eq(J.encode({ 1, 2 }), "[1,2]"); t.eq(J.encode({}), "{}"); t.eq(J.encode(nil), "null"); t.eq(J.encode("q\""), '"q\\""')
  t.eq(J.encode({ x = { true } }, { indent = 2 }), '{\n  "x": [\n    true\n  ]\n}')
end)

t.test("decode's errors say what and where, at the caller's line", function()
  t.raises(function() J.decode('{"a": 1,\n "b": tru}') end,
    "runara.json.decode: not valid JSON: parse error at line 2, column 10", "test_json.lua:%d+:")
  t.raises(function() J.decode("[1e999]") end, "runara.json.decode: not valid JSON: number overflow parsing '1e999'")
  t.raises(function() J.decode(string.rep("[", 65)) end, "runara.json.decode: the text is nested deeper than 64 levels (at byte 64)")
  t.raises(function() J.decode('"\255"') end, "ill-formed UTF-8 byte")
  t.raises(function() J.decode("") end, "unexpected end of input")
  t.raises(function() J.decode('{"a": 1}x') end, "line 1, column 9")
  t.raises(function() J.decode(nil) end, "runara.json.decode: argument #1 (text) must be a string, got nil", "test_json.lua:%d+:")
  t.eq(#J.decode(string.rep("[", 64) .. string.rep("]", 64)), 1)
end)

t.test("encode's errors: what is not plain data, strings that are not UTF-8, bad options", function()
  t.raises(function() J.encode({ f = print }) end, "runara.json.encode: value.f is not plain data: it is a function", "test_json.lua:%d+:")
  t.raises(function() J.encode("\255") end, "runara.json.encode: a string is not UTF-8 (invalid UTF-8 byte at index 0: 0xFF)", "test_json.lua:%d+:")
  t.raises(function() J.encode({}, { indent = -1 }) end, "option 'indent' must be a whole number from 0 to 8, got -1")
  t.raises(function() J.encode({}, { indent = 9 }) end, "option 'indent' must be a whole number from 0 to 8, got 9")
  t.raises(function() J.encode({}, { indnet = 2 }) end, "indnet")
  t.raises(function() J.encode() end, "runara.json.encode: argument #1 (value)")
end)

t.test("served_models.in_body: the data's ids in order; permissions' ids ignored; not JSON says so", function()
  local vllm = '{"object":"list","data":[{"id":"m1","object":"model","permission":[{"id":"modelperm-1","object":"model_permission"}]},'
    .. '{"id":"m2","object":"model"}]}'
  local ids = served.in_body(vllm)
  t.eq(#ids, 2); t.eq(ids[1], "m1"); t.eq(ids[2], "m2")
  t.eq(#served.in_body('{"data": []}'), 0); t.eq(#served.in_body('{"object": "list"}'), 0)
  local none, why = served.in_body("<html>not found</html>")
  t.eq(none, nil); t.match(why, "^not JSON: not valid JSON: parse error at line 1, column 1")
end)

t.done()
