// nuvec_nn: modules, layers, losses and optimizers in the manner of mlx.nn
// and mlx.optimizers (docs/nn.md). Namespaces nuvec::nn and nuvec::optim.
#pragma once

#include "nuvec/nn/activations.h"
#include "nuvec/nn/average.h"
#include "nuvec/nn/containers.h"
#include "nuvec/nn/distributed.h"
#include "nuvec/nn/layers.h"
#include "nuvec/nn/losses.h"
#include "nuvec/nn/module.h"
#include "nuvec/nn/optimizer.h"
#include "nuvec/nn/optimizers.h"
#include "nuvec/nn/positional.h"
#include "nuvec/nn/schedulers.h"
#include "nuvec/nn/transformer.h"
#include "nuvec/nn/walk.h"
#include "nuvec/nn/conv.h"
#include "nuvec/nn/init.h"
#include "nuvec/nn/normalization.h"
#include "nuvec/nn/pooling.h"
#include "nuvec/nn/recurrent.h"
