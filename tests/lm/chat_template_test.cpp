// ChatTemplate against jinja2: every case of tests/refs/lm_jinja/refs.json
// (recorded by tools/record_jinja.py with jinja2 configured as transformers'
// apply_chat_template) renders byte for byte what jinja2 rendered, or fails
// where jinja2 failed.
#include "nuvec/lm/chat_template.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "nuvec/core/error.h"
#include "nuvec/gguf.h"
#include "lm/support/lm_refs.h"

namespace {

using nuvec::lm::ChatMessage;
using nuvec::lm::ChatTemplate;
using Json = nlohmann::ordered_json;

std::string refs_dir() { return std::string(NUVEC_REFS_DIR) + "lm_jinja/"; }

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

const Json& refs() {
  static const Json j = Json::parse(read_file(refs_dir() + "refs.json"));
  return j;
}

// Renders one case: the template's output, or "error: ..." when it throws
// nuvec::Error (anything else, a crash included, fails the test).
std::string run_case(const Json& c, bool* failed) {
  std::string source =
      c.contains("source")
          ? c["source"].get<std::string>()
          : read_file(refs_dir() + c["template"].get<std::string>());
  *failed = false;
  try {
    ChatTemplate t(source);
    return t.render_json(c["context"].dump());
  } catch (const nuvec::Error& e) {
    *failed = true;
    EXPECT_EQ(e.kind(), nuvec::ErrorKind::invalid_argument) << e.what();
    EXPECT_NE(std::string(e.what()).find("[chat_template]"), std::string::npos);
    return e.what();
  }
}

// A recorded output with the recording's day (strftime_now, "%d %b %Y")
// replaced by today's, which the template renders now.
std::string with_today(std::string out) {
  if (!refs().contains("strftime_now_date")) return out;
  const std::string then = refs()["strftime_now_date"].get<std::string>();
  std::time_t t = std::time(nullptr);
  char now[64];
  std::strftime(now, sizeof now, "%d %b %Y", std::localtime(&t));
  for (size_t at = out.find(then); at != std::string::npos; at = out.find(then, at + 1)) out.replace(at, then.size(), now);
  return out;
}

TEST(ChatTemplate, RefsRecordedWithJinja2) {
  ASSERT_TRUE(refs().contains("jinja2_version"));
  EXPECT_EQ(refs()["jinja2_version"].get<std::string>(), "3.1.6");
  EXPECT_GE(refs()["cases"].size(), 100u);
}

TEST(ChatTemplate, MatchesJinja2) {
  int outputs = 0, errors = 0;
  for (const Json& c : refs()["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    bool failed;
    std::string got = run_case(c, &failed);
    if (c.contains("error")) {
      ++errors;
      EXPECT_TRUE(failed) << "jinja2 failed with " << c["error"]
                          << " but we rendered:\n"
                          << got;
    } else {
      ++outputs;
      EXPECT_FALSE(failed) << got;
      EXPECT_EQ(got, with_today(c["output"].get<std::string>()));
    }
  }
  EXPECT_GT(outputs, 50);
  EXPECT_GT(errors, 20);
}

// apply() gives the context transformers gives: messages, tools and
// documents (None), add_generation_prompt, bos_token, eos_token.
TEST(ChatTemplate, ApplyMatchesRenderJson) {
  ChatTemplate t(
      "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}"
      "{% endfor %}{% if add_generation_prompt %}<gen>{% endif %}"
      "{{ tools is none }}{{ documents is none }}{{ eos_token }}");
  std::vector<ChatMessage> msgs = {{"user", "hi"}, {"assistant", "yo"}};
  EXPECT_EQ(t.apply(msgs, true, "<s>", "</s>"),
            "<s><user>hi<assistant>yo<gen>TrueTrue</s>");
  EXPECT_EQ(t.apply(msgs, false), "<user>hi<assistant>yoTrueTrue");
  EXPECT_EQ(t.render_json(R"({"messages": [{"role": "user", "content": "hi"}],
                              "add_generation_prompt": true, "tools": null,
                              "documents": null})"),
            "<user>hi<gen>TrueTrue");
}

TEST(ChatTemplate, ErrorsNameTheLine) {
  try {
    ChatTemplate t(
        "line one\n{% if x %}\n{{ raise_exception('boom') }}\n{% endif %}");
    t.render_json(R"({"x": true})");
    FAIL() << "no error";
  } catch (const nuvec::Error& e) {
    EXPECT_NE(e.message().find("line 3"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("boom"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ChatTemplate("{{ x }}").render_json("[1, 2]"), nuvec::Error);
  EXPECT_THROW(ChatTemplate("{{ x }}").render_json("{not json"), nuvec::Error);
  EXPECT_THROW(ChatTemplate("{% if %}"), std::invalid_argument);
}

// Hostile templates fail cleanly instead of exhausting the stack or memory.
TEST(ChatTemplate, BoundsHostileTemplates) {
  std::string deep =
      "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
  EXPECT_THROW(ChatTemplate{deep}, nuvec::Error);
  std::string nested;
  for (int k = 0; k < 3000; ++k) nested += "{% if true %}";
  EXPECT_THROW(ChatTemplate{nested}, nuvec::Error);
  ChatTemplate grow(
      "{% set ns = namespace(s='xxxxxxxxxxxxxxxx') %}{% for i in range(40) %}"
      "{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s | length }}");
  EXPECT_THROW(grow.render_json("{}"), nuvec::Error);
  ChatTemplate spin(
      "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
      "{% endfor %}");
  EXPECT_THROW(spin.render_json("{}"), nuvec::Error);
  ChatTemplate rec("{% macro r() %}{{ r() }}{% endmacro %}{{ r() }}");
  EXPECT_THROW(rec.render_json("{}"), nuvec::Error);
  std::string deep_json(3000, '[');
  deep_json = "{\"x\": " + deep_json + std::string(3000, ']') + "}";
  EXPECT_THROW(ChatTemplate("{{ x }}").render_json(deep_json), nuvec::Error);
}

// The chat template of SmolLM2-135M-Instruct's GGUF file, read from the
// file named by NUVEC_SMOLLM2_GGUF, against jinja2's outputs for it.
TEST(ChatTemplate, SmolLM2GgufTemplate) {
  NUVEC_NEED_SMOLLM2(path);
  ASSERT_TRUE(refs().contains("smollm2_gguf"));
  const Json& g = refs()["smollm2_gguf"];
  auto meta = nuvec::io::load_gguf(path).second;
  auto it = meta.find("tokenizer.chat_template");
  ASSERT_NE(it, meta.end());
  const auto* source = std::get_if<std::string>(&it->second);
  ASSERT_NE(source, nullptr);
  ASSERT_EQ(static_cast<std::int64_t>(source->size()),
            g["template_bytes"].get<std::int64_t>())
      << "not the file the references were recorded from";
  ChatTemplate t(*source);
  for (const Json& c : g["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    std::vector<ChatMessage> msgs;
    for (const Json& m : c["messages"])
      msgs.push_back(
          {m["role"].get<std::string>(), m["content"].get<std::string>()});
    std::string got = t.apply(msgs, c["add_generation_prompt"].get<bool>(),
                              c["bos_token"].get<std::string>(),
                              c["eos_token"].get<std::string>());
    EXPECT_EQ(got, c["output"].get<std::string>());
  }
}

}  // namespace
