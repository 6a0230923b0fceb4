// nuvec_nn: modules, layers, losses and optimizers in the manner of mlx.nn
// and mlx.optimizers (docs/nn.md). Namespaces nuvec::nn and nuvec::optim.
#pragma once

#include "nuvec/nn/layers.h"
#include "nuvec/nn/module.h"
#include "nuvec/nn/optimizer.h"
#include "nuvec/nn/walk.h"
