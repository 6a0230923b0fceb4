// nuvec_lm: the LLM runtime (docs/lm.md). Everything in namespace nuvec::lm.
#pragma once

#include "nuvec/lm/batch.h"
#include "nuvec/lm/cache.h"
#include "nuvec/lm/chat_template.h"
#include "nuvec/lm/generate.h"
#include "nuvec/lm/model.h"
#include "nuvec/lm/paged.h"
#include "nuvec/lm/sample.h"
#include "nuvec/lm/tokenizer.h"
