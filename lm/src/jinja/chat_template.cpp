// nuvec::lm::ChatTemplate on the jinja interpreter.
#include "nuvec/lm/chat_template.h"

#include <nlohmann/json.hpp>

#include "jinja/ast.h"
#include "jinja/interpreter.h"

namespace nuvec::lm {

struct ChatTemplate::Impl {
  jinja::Body body;
};

namespace {

using jinja::Value;

Value from_json(const nlohmann::ordered_json& j, int depth) {
  if (depth > 256) jinja::fail(0, "context JSON nested too deeply");
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return Value::none();
    case nlohmann::ordered_json::value_t::boolean:
      return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value::integer(j.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      auto u = j.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX))
        return Value::floating(static_cast<double>(u));
      return Value::integer(static_cast<std::int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float:
      return Value::floating(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value::string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      jinja::List items;
      for (const auto& x : j) items.push_back(from_json(x, depth + 1));
      return Value::make_list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      jinja::Dict d;
      for (auto it = j.begin(); it != j.end(); ++it)
        d.items.emplace_back(Value::string(it.key()),
                             from_json(it.value(), depth + 1));
      return Value::make_dict(std::move(d));
    }
    default:
      jinja::fail(0, "unsupported JSON value in the context");
  }
}

std::string render(const ChatTemplate::Impl& impl, const Value& context) {
  jinja::Interpreter in;
  return in.render(impl.body, context);
}

}  // namespace

ChatTemplate::ChatTemplate(const std::string& source) {
  auto impl = std::make_shared<Impl>();
  impl->body = jinja::parse(source);
  impl_ = std::move(impl);
}

std::string ChatTemplate::apply(const std::vector<ChatMessage>& messages,
                                bool add_generation_prompt,
                                const std::string& bos_token,
                                const std::string& eos_token) const {
  jinja::List msgs;
  for (const auto& m : messages) {
    jinja::Dict d;
    d.items.emplace_back(Value::string("role"), Value::string(m.role));
    d.items.emplace_back(Value::string("content"), Value::string(m.content));
    msgs.push_back(Value::make_dict(std::move(d)));
  }
  // transformers passes tools and documents as None when there are none.
  jinja::Dict ctx;
  ctx.items.emplace_back(Value::string("messages"),
                         Value::make_list(std::move(msgs)));
  ctx.items.emplace_back(Value::string("tools"), Value::none());
  ctx.items.emplace_back(Value::string("documents"), Value::none());
  ctx.items.emplace_back(Value::string("add_generation_prompt"),
                         Value::boolean(add_generation_prompt));
  ctx.items.emplace_back(Value::string("bos_token"), Value::string(bos_token));
  ctx.items.emplace_back(Value::string("eos_token"), Value::string(eos_token));
  return render(*impl_, Value::make_dict(std::move(ctx)));
}

std::string ChatTemplate::render_json(const std::string& context_json) const {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(context_json);
  } catch (const nlohmann::json::exception& e) {
    jinja::fail(0, std::string("context is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) jinja::fail(0, "the context JSON must be an object");
  return render(*impl_, from_json(j, 0));
}

}  // namespace nuvec::lm
