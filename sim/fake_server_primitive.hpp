// http_load.fake_server{...}: a simulated OpenAI-compatible LLM server (fake_llm_server.hpp) in
// this process, for trying a load without a GPU. It belongs to the simulator, not to librunara:
// the runara command adds it to every run (a primitive that adds to the http_load table, see
// Primitive::adds_to_existing), an embedding host may do the same.
//
// Contract: the servers a run starts stop at its teardown (their threads joined); each one's
// address is added to the run's reachable set, nothing else is.
#pragma once

#include <memory>

#include "runara/primitive.hpp"

namespace runara {

std::unique_ptr<Primitive> make_fake_server_primitive();

}  // namespace runara
