#!/usr/bin/env python3
"""Records what jinja2 renders for the chat templates of tests/refs/lm_jinja.

Each *.jinja there (written for nuvec, in the style of the families' chat
templates) and each snippet below is rendered with several contexts by
jinja2 configured as transformers' apply_chat_template configures it (the
template is compiled by transformers' own _compile_jinja_template when it is
installed: ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks,
loopcontrols, raise_exception, strftime_now, tojson with ensure_ascii=False).
The output, or the error, goes to tests/refs/lm_jinja/refs.json, with the
versions. tests/lm/chat_template_test.cpp replays every case.

With --gguf PATH (SmolLM2-135M-Instruct's GGUF), the outputs of that file's
own template (tokenizer.chat_template) for a few contexts are recorded too;
only the outputs, never the template's text.
"""
import argparse
import datetime
import json
import os
import sys

import jinja2

HERE = os.path.dirname(os.path.abspath(__file__))
REFS = os.path.join(HERE, "..", "tests", "refs", "lm_jinja")


def compile_template(source):
    try:
        from transformers.utils.chat_template_utils import _compile_jinja_template
        return _compile_jinja_template(source)
    except ImportError:
        pass
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                          separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda f: datetime.datetime.now().strftime(f)
    return env.from_string(source)


def render(source, context):
    try:
        out = compile_template(source).render(**context)
        return {"output": out}
    except Exception as e:  # noqa: BLE001 - any failure is an expected error
        return {"error": f"{type(e).__name__}: {e}"}


# ---- contexts ----
def msg(role, content, **extra):
    d = {"role": role, "content": content}
    d.update(extra)
    return d


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["c", "f"]},
                "days": {"type": "integer", "minimum": 1, "default": 1},
                "precision": {"type": "number", "default": 0.5},
            },
            "required": ["city"],
        },
    },
}
CALC_TOOL = {"type": "function", "function": {"name": "add", "description": "Adds \"a\" and b.",
                                              "parameters": {"type": "object", "properties": {
                                                  "a": {"type": "number"}, "b": {"type": "number"}}}}}
TOOL_CALL = {"type": "function", "function": {"name": "get_weather",
                                              "arguments": {"city": "Zürich", "days": 2}}}


def base(messages, gen, **extra):
    ctx = {"messages": messages, "tools": None, "documents": None,
           "add_generation_prompt": gen, "bos_token": "<s>", "eos_token": "</s>"}
    ctx.update(extra)
    return ctx


CHAT = [msg("user", "Hello!"), msg("assistant", " Hi there. "), msg("user", "How are you?")]
SYS_CHAT = [msg("system", "You are terse.")] + CHAT
UNICODE = [msg("system", "Réponds en français 🇫🇷."), msg("user", "Ça va? 日本語 \"quotes\" \\ back\n\tline"),
           msg("assistant", "Très bien — merci! ✓")]
TOOL_CHAT = [msg("system", "Use tools."), msg("user", "Weather in Zürich?"),
             msg("assistant", "", tool_calls=[TOOL_CALL]),
             msg("tool", '{"temp": 21.5}'), msg("tool", "sunny"),
             msg("assistant", "It is 21.5 degrees and sunny.")]
THINK_CHAT = [msg("user", "2+2?"), msg("assistant", "<think>\nadd them\n</think>\n\n4"),
              msg("user", "and 3+3?"), msg("assistant", "6", reasoning_content="\nadd again\n")]

CONTEXTS = {
    "chat_gen": base(CHAT, True),
    "chat_nogen": base(CHAT, False),
    "system_chat": base(SYS_CHAT, True),
    "unicode": base(UNICODE, False),
    "single_user": base([msg("user", "  padded  ")], True),
    "empty_content": base([msg("user", ""), msg("assistant", "")], False),
    "bad_order": base([msg("assistant", "first?"), msg("user", "x")], False),
    "tools": base(TOOL_CHAT, True, tools=[WEATHER_TOOL, CALC_TOOL], date_string="26 Jul 2024"),
    "tools_system_only": base([msg("system", "S"), msg("user", "U")], True, tools=[CALC_TOOL],
                              date_string="01 Jan 2025", tools_in_user_message=False),
    "builtin_tools": base([msg("user", "search"), msg("assistant", "", tool_calls=[
        {"function": {"name": "brave_search", "arguments": {"query": "x"}}}])], False,
        builtin_tools=["brave_search", "code_interpreter", "wolfram_alpha"], date_string="02 Feb 2024"),
    "think": base(THINK_CHAT, True),
    "think_off": base(THINK_CHAT[:1], True, enable_thinking=False),
    "gemma_parts": base([msg("system", [{"type": "text", "text": "Sys part"}]),
                         msg("user", [{"type": "image"}, {"type": "text", "text": " Describe. "}]),
                         msg("assistant", "A cat.")], True),
    "empty_messages": base([], True),
}

TEMPLATE_CONTEXTS = {
    "llama2_style.jinja": ["chat_gen", "system_chat", "unicode", "single_user", "bad_order", "empty_messages"],
    "llama3_style.jinja": ["chat_gen", "chat_nogen", "system_chat", "unicode", "single_user", "empty_messages"],
    "llama31_tools_style.jinja": ["tools", "tools_system_only", "builtin_tools", "system_chat", "unicode"],
    "mistral_style.jinja": ["chat_gen", "unicode", "bad_order", "empty_content", "empty_messages"],
    "mixtral_system_style.jinja": ["chat_gen", "system_chat", "unicode", "bad_order", "empty_messages"],
    "smollm2_style.jinja": ["chat_gen", "chat_nogen", "system_chat", "unicode", "empty_messages"],
    "qwen25_tools_style.jinja": ["chat_gen", "system_chat", "tools", "unicode", "empty_content"],
    "qwen3_think_style.jinja": ["think", "think_off", "tools", "system_chat", "unicode"],
    "gemma3_style.jinja": ["chat_gen", "system_chat", "gemma_parts", "unicode", "bad_order"],
    "whitespace.jinja": ["chat_gen"],
    "loops.jinja": ["chat_gen", "unicode", "empty_messages"],
    "macros.jinja": ["chat_gen", "empty_messages"],
}

# Small templates of our own: expressions, filters, tests, methods, errors.
V = {"s": "Hello, World", "n": 7, "f": 2.5, "l": [3, 1, 2], "d": {"b": 1, "a": 2},
     "users": [{"name": "ann", "age": 31, "tags": ["x"]}, {"name": "Bob", "age": 25},
               {"name": "cy", "age": 40, "active": True}],
     "u8": "Ünïcødé straße ΣΑΣ", "none_v": None, "t": True, "e": "", "big": 12345678901234}
SNIPPETS = [
    ("arith", "{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 2 ** -2 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }}"),
    ("float_print", "{{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1e15 }} {{ 1.5e-5 }} {{ 0.0001 }} {{ 3 * 1.5 }} {{ 10 / 4 }} {{ 1e100 }} {{ -0.0 }} {{ 123456789.125 }} {{ f * 2 }} {{ 5.0 // 2 }} {{ -5.5 % 2 }}"),
    ("int_float_mix", "{{ 1 == 1.0 }} {{ true == 1 }} {{ true + true }} {{ 3 > 2.5 }} {{ n + f }} {{ big * 10 }} {{ 10 - 12 }}"),
    ("compare_chain", "{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 'abc' != 'abd' }} {{ none == none }} {{ 1 != 1 }}"),
    ("logic", "{{ true and 'x' }} {{ false or 'y' }} {{ '' or 0 or 'z' }} {{ not none }} {{ not 1 }} {{ 0 and 1 }} {{ none or [] }}"),
    ("membership", "{{ 'll' in s }} {{ 'z' not in s }} {{ 2 in l }} {{ 'a' in d }} {{ 'zz' in d }} {{ 4 not in l }} {{ 'x' in undefined_var }}"),
    ("ternary", "{{ 'yes' if t else 'no' }} {{ 'a' if none_v else 'b' if n > 5 else 'c' }} [{{ 'x' if false }}] {{ (1 if false) is defined }}"),
    ("concat", "{{ 'a' ~ 1 ~ none ~ true ~ 2.0 ~ [1] }} {{ s ~ undefined_var ~ '!' }}"),
    ("literals", "{{ [1, 'two', 3.0, none, true, [], {}] }} {{ {'k': 'v', 'n': [1, (2, 3)]} }} {{ (1,) }} {{ () }} {{ 'it\\'s' }} {{ \"say \\\"hi\\\"\" }} {{ 'tab\\tnew\\nline' | tojson }} {{ '\\u00e9\\x41' }} {{ True }} {{ None }} {{ 1_000 }}"),
    ("repr_strings", "{{ ['it\\'s', 'a\"b', 'both \\' \"', 'back\\\\slash', 'nl\\n', 'é'] }}"),
    ("index_slice", "{{ l[0] }} {{ l[-1] }} {{ l[1:] }} {{ l[:-1] }} {{ l[::-1] }} {{ l[::2] }} {{ s[0] }} {{ s[-5:] }} {{ s[::-1] }} {{ s[2:8:2] }} {{ u8[1] }} {{ u8[-4:] }} {{ u8[::-1] }} [{{ l[10] }}] {{ l[10] is defined }} {{ d['a'] }} {{ d.b }} {{ users[1].name }} {{ users[0]['tags'][0] }} {{ l.0 }}"),
    ("missing_attr", "[{{ d.zz }}] {{ d.zz is defined }} [{{ none_v.x }}] {{ users[1].active is defined }} {{ d.get('zz', 'dflt') }} {{ d.get('a') }} [{{ d.get('zz') }}]"),
    ("dict_methods", "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %} {{ d.keys() | list }} {{ d.values() | list }} {{ d | length }} {{ d['items'] is defined }}"),
    ("str_methods", "{{ '  pad  '.strip() }}|{{ 'xxhixx'.strip('x') }}|{{ '  l'.lstrip() }}|{{ 'r  '.rstrip() }}|{{ '\\n\\nabc\\n'.lstrip('\\n') }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b c '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a-b-c'.rsplit('-', 1) }}|{{ s.startswith('Hell') }}|{{ s.endswith(('x', 'ld')) }}|{{ s.upper() }}|{{ s.lower() }}|{{ 'hello wORLD'.title() }}|{{ 'hELLO'.capitalize() }}|{{ s.replace('l', 'L') }}|{{ s.replace('l', 'L', 2) }}|{{ s.find('o') }}|{{ s.find('q') }}|{{ s.rfind('o') }}|{{ s.count('l') }}|{{ '-'.join(['a', 'b']) }}|{{ '12'.isdigit() }}|{{ 'ab'.isalpha() }}|{{ 'x'.center(5, '*') }}|{{ '7'.zfill(3) }}|{{ '{} and {}'.format('x', 2) }}|{{ '{0}{name}'.format('a', name='b') }}|{{ 'a\\nb\\r\\nc'.splitlines() }}|{{ u8.upper() }}|{{ u8.lower() }}|{{ 'they\\'re bill\\'s'.title() }}"),
    ("filters_text", "{{ '  x  ' | trim }}|{{ 'xxyxx' | trim('x') }}|{{ s | upper }}|{{ s | lower }}|{{ 'hello world-wide (test) they\\'re' | title }}|{{ 'hELLO there' | capitalize }}|{{ s | replace('World', 'There') }}|{{ s | length }}|{{ u8 | length }}|{{ u8 | upper }}|{{ s | reverse }}|{{ 'a b  c' | wordcount }}|{{ 'x' | center(7) }}|{{ '<a href=\"x\">&</a>' | e }}|{{ 'safe' | safe }}|{{ n | string }}|{{ none_v | string }}|{{ ('abcdefghij' * 30) | truncate(20) }}"),
    ("filters_seq", "{{ l | first }} {{ l | last }} {{ l | sort }} {{ l | sort(reverse=true) }} {{ ['b', 'A', 'c'] | sort }} {{ ['b', 'A', 'c'] | sort(case_sensitive=true) }} {{ l | reverse | list }} {{ l | join }} {{ l | join(', ') }} {{ l | sum }} {{ l | min }} {{ l | max }} {{ [1, 1, 2, 'a', 'A'] | unique | list }} {{ 'abc' | list }} {{ d | list }} {{ d | items | list }} {{ d | dictsort }} {{ [] | first is defined }} {{ 'abc' | first }} {{ 'abc' | last }} {{ l | count }}"),
    ("filters_attr", "{{ users | map(attribute='name') | join('/') }} {{ users | selectattr('active') | map(attribute='name') | list }} {{ users | rejectattr('active') | list | length }} {{ users | selectattr('age', 'gt', 30) | map(attribute='name') | list }} {{ users | selectattr('name', 'equalto', 'Bob') | list | length }} {{ users | sort(attribute='age') | map(attribute='name') | join(',') }} {{ users | sort(attribute='name') | map(attribute='name') | join(',') }} {{ users | map(attribute='active', default=false) | list }} {{ users | sum(attribute='age') }} {{ users | max(attribute='age') }} {{ users[:1] | map(attribute='tags.0') | list }} {{ l | map('string') | join('+') }} {{ [1, 2, 3, 4] | select('even') | list }} {{ [1, 2, 3, 4] | reject('odd') | list }} {{ ['a', 'b', 'c'] | reject('equalto', 'b') | join }} {{ users | unique(attribute='age') | list | length }}"),
    ("filters_num", "{{ '42' | int }} {{ '4.7' | int }} {{ 'x' | int }} {{ 'x' | int(5) }} {{ 3.9 | int }} {{ '0x1A' | int(0, 16) }} {{ '2.5' | float }} {{ 'q' | float }} {{ 3 | float }} {{ -3 | abs }} {{ -2.5 | abs }} {{ 2.5 | round }} {{ 3.5 | round }} {{ 2.675 | round(2) }} {{ 2.1 | round(0, 'ceil') }} {{ 2.9 | round(method='floor') }} {{ 7 | round }} {{ -1 | abs }} {{ '  12 ' | int }}"),
    ("filters_default", "[{{ undefined_var | default('dflt') }}] [{{ none_v | default('dflt') }}] [{{ e | default('dflt') }}] [{{ e | default('dflt', true) }}] [{{ undefined_var | d('short') }}] [{{ n | default(0) }}] [{{ undefined_var | default }}]"),
    ("tojson_forms", "{{ d | tojson }}|{{ users | tojson(indent=2) }}|{{ d | tojson(sort_keys=true) }}|{{ l | tojson(separators=(',', ':')) }}|{{ 'é\"\\\\\\n\\u0001' | tojson }}|{{ none_v | tojson }}|{{ [1.0, 2.5e-8, true, none] | tojson }}|{{ {} | tojson(indent=4) }}|{{ {'a': [], 'b': {}} | tojson(indent=1) }}|{{ u8 | tojson }}|{{ (1, 2) | tojson }}|{{ big | tojson }}"),
    ("indent_filter", "{{ 'a\\nb\\n\\nc' | indent }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent(2, blank=true) }}|{{ 'x\\ny' | indent('> ') }}|{{ '' | indent(first=true) }}"),
    ("tests", "{{ n is number }} {{ f is float }} {{ n is integer }} {{ t is integer }} {{ t is boolean }} {{ t is true }} {{ 1 is true }} {{ none_v is none }} {{ s is string }} {{ d is mapping }} {{ l is mapping }} {{ l is sequence }} {{ s is sequence }} {{ d is iterable }} {{ n is iterable }} {{ n is odd }} {{ n is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ 'a' is eq 'a' }} {{ 2 is equalto 3 }} {{ 3 is gt 2 }} {{ 3 is lessthan 2 }} {{ 2 is in l }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ undefined_var is undefined }} {{ n is not defined }} {{ users[0] is mapping }} {{ range is callable }} {{ 2 is ne 2 }} {{ 2 is ge 2 }} {{ 2 is le 1 }} {{ none_v is not none }} {{ false is false }}"),
    ("undefined_behaviour", "[{{ undefined_var }}] [{{ undefined_var | length }}] [{{ undefined_var | trim }}] [{{ undefined_var | list }}] {{ undefined_var == none }} {{ undefined_var is defined }} {% if undefined_var %}T{% else %}F{% endif %} {% for x in undefined_var %}x{% else %}empty{% endfor %} [{{ undefined_var | join(',') }}] [{{ undefined_var | upper }}]"),
    ("namespace_ops", "{% set ns = namespace(a=1, items=[]) %}{% set ns.a = ns.a + 1 %}{% set ns.b = 'new' %}{% set ns.items = ns.items + ['x'] %}{{ ns.a }} {{ ns.b }} {{ ns.items }} {{ ns.missing is defined }} {{ ns['a'] }}{% set ns2 = namespace({'k': 'v'}) %} {{ ns2.k }}"),
    ("set_forms", "{% set a, b = 1, 2 %}{{ a }}{{ b }} {% set t = 1, 2 %}{{ t }} {% set x = [1, 2] %}{% set y = x + [3] %}{{ x }}{{ y }} {% set z = 'q' %}{% if true %}{% set z = 'r' %}{% endif %}{{ z }}"),
    ("dict_global", "{{ dict(a=1, b='x') }} {{ dict(a=1) | tojson }} {{ {'a': 1}.copy() }} {{ range(3) | list }} {{ range(1, 4) | sum }}"),
    ("strftime_fixed_ctx", "{% if not date_string is defined %}{% set date_string = '26 Jul 2024' %}{% endif %}{{ date_string }} {{ strftime_now is defined }}"),
    ("filter_chain", "{{ messages | map(attribute='content') | map('trim') | map('upper') | join(' | ') }} {{ messages | selectattr('role', 'equalto', 'user') | list | length }} {{ (messages | last).content | default('none') }} {{ messages[-1]['role'] | capitalize }}"),
    ("loop_dict_items_sort", "{% for k, v in d | dictsort %}{{ k }}{{ v }}{% endfor %} {% for k, v in d | dictsort(by='value', reverse=true) %}{{ k }}{% endfor %}"),
    ("whitespace_mix", "a  {%- if true -%}  b  {%- endif -%}  c\n  {% if true %}\n  d\n  {% endif %}\n{{- '  e  ' -}}\n  f{# c #}\n  {#- c -#}  g"),
    ("trailing_newline", "line one\n"),
    ("crlf", "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\nc"),
    ("block_at_start_lstrip", "   {% if true %}x{% endif %}   {% if true %}y{% endif %}\n   {{ 'z' }}"),
    ("nested_dict_literal", "{{ {'a': {'b': {'c': 1}}} }}{{ {'a': {'b': 1}}['a']['b'] }}"),
    ("unicode_ops", "{{ 'ça' + ' va' }} {{ 'é' * 3 }} {{ 'ü' in u8 }} {{ u8.split() }} {{ u8 | replace('ß', 'ss') }} {{ 'ÀÉÎ' | lower }} {{ 'àéî' | capitalize }} {{ u8.find('ß') }}"),
    ("tag_text_in_strings", "{{ '{%' ~ ' %}' ~ '{{' ~ '}}' ~ '{#' }} {{ {'a': {'b': 'c'}}['a'] }}"),
    ("lstrip_comment_lines", "x\n    {# indented comment #}\n    {%- if true %}\n  y\n    {%+ endif %}\nz\n\t{% set q = 1 %}\n{{ q }}"),
    ("trim_after_var_not_block", "{{ 'a' }}\nb\n{% if true %}\n\nc{% endif %}\n\n"),
    ("shadowed_loops", "{% for a in [1, 2] %}{% set outer = loop %}{% for b in 'xy' %}{{ outer.index }}{{ loop.index }}{{ b }} {% endfor %}{% endfor %}"),
    ("macro_defaults_chain", "{% macro m(a, b=a * 2, c='x' ~ b) %}{{ a }},{{ b }},{{ c }}{% endmacro %}{{ m(1) }} {{ m(1, 5) }} {{ m(a=3, c='z') }}"),
    ("macro_sees_globals", "{% set g = 'G' %}{% macro m() %}{{ g }}{{ messages | length }}{% endmacro %}{{ m() }}"),
    ("loop_var_leak", "{% for x in [1, 2] %}{% endfor %}[{{ x }}] {% set y = 0 %}{% for y in [5] %}{{ y }}{% endfor %}{{ y }}"),
    ("if_in_for_set", "{% set found = false %}{% for u in users %}{% if u.age > 30 %}{% set found = true %}{% endif %}{% endfor %}{{ found }}"),
    ("string_escapes", "{{ 'a\\nb' }}|{{ \"q\\\"q\" }}|{{ 'oct\\101' }}|{{ 'unknown\\d' }}|{{ '\\U0001F600' }}"),
    ("is_sameas", "{{ none_v is sameas none }} {{ t is sameas true }} {{ l is sameas l }}"),
    ("neg_and_filters", "{{ -n | abs }} {{ -(n | abs) }} {{ - 2 ** 2 }} {{ (-2) ** 2 }} {{ n - -1 }} {{ not n is odd }}"),
    ("content_parts", "{% for p in parts %}{% if p.type == 'text' %}{{ p.text }}{% elif p['type'] == 'image' %}<img>{% endif %}{% endfor %}{{ parts[0]['text'] }}"),
    ("big_ints", "{{ big }} {{ big // 7 }} {{ big % 1000 }} {{ big * -1 }} {{ big / 2 }} {{ 2 ** 62 }}"),
    ("empty_template", ""),
    ("only_whitespace_tags", "   {%- if true -%}   {%- endif -%}   "),

    ("err_raise", "{{ raise_exception('custom failure') }}"),
    ("err_undefined_attr", "{{ undefined_var.attr }}"),
    ("err_undefined_add", "{{ undefined_var + 1 }}"),
    ("err_none_attr_chain", "{{ none_v.a.b }}"),
    ("err_type_add", "{{ 'a' + 1 }}"),
    ("err_div_zero", "{{ 1 / 0 }}"),
    ("err_mod_zero", "{{ 1 % 0 }}"),
    ("unknown_filter_untaken", "{% if false %}{{ x | no_such_filter }}{% endif %}ok"),
    ("err_unknown_filter", "{{ s | no_such_filter }}"),
    ("err_unknown_filter_unrun_loop", "{% for x in [] %}{{ x | no_such_filter }}{% endfor %}"),
    ("unknown_test_untaken", "{{ 1 if true else (x is no_such_test) }}{% if false %}{% if x is nosuch %}{% endif %}{% endif %}"),
    ("err_unknown_test", "{{ 1 is no_such_test }}"),
    ("err_unclosed_if", "{% if true %}open"),
    ("err_unclosed_for", "{% for x in l %}{{ x }}"),
    ("err_bad_endtag", "{% if true %}x{% endfor %}"),
    ("err_unclosed_var", "{{ 1 + "),
    ("err_unclosed_comment", "{# never closed"),
    ("err_unclosed_string", "{{ 'abc }}"),
    ("err_bad_bracket", "{{ (1 + 2] }}"),
    ("err_unknown_tag", "{% frobnicate %}"),
    ("err_include", "{% include 'other.jinja' %}"),
    ("err_list_append", "{% set ns = namespace(l=[]) %}{{ ns.l.append(1) }}"),
    ("err_dict_update", "{{ d.update({'x': 1}) }}"),
    ("err_underscore_attr", "{{ s.__class__() }}"),
    ("err_ns_underscore", "{% set ns = namespace() %}{% set ns._x = 1 %}"),
    ("err_set_attr_non_ns", "{% set d.x = 1 %}"),
    ("err_not_callable", "{{ n() }}"),
    ("err_call_undefined", "{{ undefined_fn() }}"),
    ("err_iterate_int", "{% for x in n %}{% endfor %}"),
    ("err_unpack", "{% for a, b in [[1, 2, 3]] %}{% endfor %}"),
    ("err_compare_types", "{{ 1 < 'a' }}"),
    ("err_length_int", "{{ n | length }}"),
    ("err_tojson_undefined", "{{ undefined_var | tojson }}"),
    ("err_macro_too_many_args", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}"),
    ("err_recursion", "{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}"),
    ("err_break_outside_loop", "{% break %}"),
    ("err_items_non_mapping", "{{ l | items | list }}"),
    ("err_in_string_int", "{{ 1 in s }}"),
    ("err_int_undefined", "{{ undefined_var | int }}"),
    ("err_range_too_big", "{{ range(200000) | length }}"),
    ("err_str_mul_huge", "{{ ('x' * 1000000) * 100 | length }}"),
    ("err_split_empty_sep", "{{ s.split('') }}"),
    ("err_index_missing", "{{ l.index(99) }}"),
    ("err_chained_is", "{{ 1 is number is number }}"),
    ("err_stray_endblock", "{% endif %}"),
    ("err_do_tag", "{% do l.append(1) %}"),
]
SNIPPET_CTX = {"basic": dict(V, messages=CHAT, add_generation_prompt=True, bos_token="<s>", eos_token="</s>")}


def snippet_contexts(name):
    ctxs = [("basic", SNIPPET_CTX["basic"])]
    if name == "content_parts":
        return [("parts", dict(V, parts=[{"type": "text", "text": "hi "}, {"type": "image"}, {"type": "text", "text": "there"}]))]
    if name in ("filter_chain",):
        ctxs.append(("unicode", dict(V, messages=UNICODE)))
    return ctxs


def gguf_template(path):
    from gguf import GGUFReader
    r = GGUFReader(path)
    f = r.fields["tokenizer.chat_template"]
    return bytes(f.parts[f.data[0]]).decode("utf-8")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf", default="/work/models/SmolLM2-135M-Instruct.Q4_1.gguf",
                    help="SmolLM2-135M-Instruct GGUF whose template's outputs to record")
    args = ap.parse_args()
    cases = []
    for name in sorted(TEMPLATE_CONTEXTS):
        with open(os.path.join(REFS, name), encoding="utf-8") as fh:
            source = fh.read()
        for cname in TEMPLATE_CONTEXTS[name]:
            case = {"name": f"{name}:{cname}", "template": name, "context": CONTEXTS[cname]}
            case.update(render(source, CONTEXTS[cname]))
            cases.append(case)
    for name, source in SNIPPETS:
        for cname, ctx in snippet_contexts(name):
            case = {"name": f"{name}:{cname}", "source": source, "context": ctx}
            case.update(render(source, ctx))
            if name.startswith("err_") != ("error" in case):
                sys.exit(f"snippet {name}: expected {'an error' if name.startswith('err_') else 'output'}, got {case.get('error', 'output')}")
            cases.append(case)
    # strftime_now renders the day of the recording; the test puts its own
    # day in its place.
    out = {"jinja2_version": jinja2.__version__, "cases": cases,
           "strftime_now_date": datetime.datetime.now().strftime("%d %b %Y")}
    try:
        import transformers
        out["transformers_version"] = transformers.__version__
    except ImportError:
        out["transformers_version"] = None
    if args.gguf and os.path.exists(args.gguf):
        tpl = gguf_template(args.gguf)
        gcases = []
        for cname in ["chat_gen", "chat_nogen", "system_chat", "unicode", "empty_messages"]:
            ctx = CONTEXTS[cname]
            c = {"name": cname, "messages": [{"role": m["role"], "content": m["content"]} for m in ctx["messages"]],
                 "add_generation_prompt": ctx["add_generation_prompt"],
                 "bos_token": ctx["bos_token"], "eos_token": ctx["eos_token"]}
            c.update(render(tpl, ctx))
            gcases.append(c)
        out["smollm2_gguf"] = {"file": os.path.basename(args.gguf),
                               "template_bytes": len(tpl.encode("utf-8")), "cases": gcases}
    with open(os.path.join(REFS, "refs.json"), "w", encoding="utf-8") as fh:
        json.dump(out, fh, ensure_ascii=False, indent=1)
        fh.write("\n")
    n_err = sum("error" in c for c in cases)
    print(f"recorded {len(cases)} cases ({n_err} errors), jinja2 {jinja2.__version__}")


if __name__ == "__main__":
    main()
