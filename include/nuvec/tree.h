// Trees of arrays: leaves, adapters, user structs, structure, operations
// and checkpoints (docs/trees.md).
#pragma once

#include "nuvec/tree/adapter.h"
#include "nuvec/tree/checkpoint.h"
#include "nuvec/tree/leaf.h"
#include "nuvec/tree/macros.h"
#include "nuvec/tree/ops.h"
#include "nuvec/tree/static_hash.h"
#include "nuvec/tree/treedef.h"
