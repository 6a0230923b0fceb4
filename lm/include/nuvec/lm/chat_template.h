// Chat templates: an interpreter of the Jinja subset that the chat templates
// of tokenizer_config.json and GGUF files use (docs/lm.md, "Chat templates"),
// rendering what Python's jinja2 renders for them.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace nuvec::lm {

/// One message of a conversation.
struct ChatMessage {
  std::string role;  ///< "system", "user", "assistant", "tool"
  std::string content;
};

/// A parsed template. Parsing errors throw nuvec::Error (kind
/// invalid_argument) naming the line and what is wrong; so do rendering
/// errors (an undefined filter, raise_exception called by the template).
class ChatTemplate {
 public:
  explicit ChatTemplate(const std::string& source);
  /// Renders with `messages`, `add_generation_prompt`, `bos_token` and
  /// `eos_token` defined (as transformers' apply_chat_template does).
  std::string apply(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                    const std::string& bos_token = "", const std::string& eos_token = "") const;
  /// Renders with a context given as the text of a JSON object (every
  /// member a variable), for templates that need more (tools, documents).
  std::string render_json(const std::string& context_json) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace nuvec::lm
