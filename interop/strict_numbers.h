// strict_numbers.h — every number on a command line read through sim/numbers.h. CLI11 on its
// own converts integers with C's base 0 (so `--tp 010` is octal 8 and `0x10` is 16), takes an
// empty value (`--tp ''`) as a default instead of refusing it, and answers a bad value with
// "Could not convert: --flag = VALUE", which names no valid range. The command line (cli/) and
// the GUI call this once on their app, after registering every option, so both read numbers
// as a Megatron-LM argument file and a NeMo YAML are read.
#pragma once

namespace CLI {
class App;
}

namespace cc::interop {

// Walks every option of `app` and of its subcommands (and theirs) and puts a transform in
// front of each integer or real option (CLI11 type INT, UINT or FLOAT; a vector or optional of
// them too; flags are left alone). The transform reads the text with sim/numbers.h, refuses
// an empty value, and hands CLI11 a canonical decimal, so CLI11's own conversion cannot fail
// (nan and inf excepted: they reach the option's own range check, see parse_non_finite):
// a value beyond what the option's variable holds (2^31 for an int) is refused there, naming
// that range. Refusals are cc::SpecError whose field() is the option's first long name
// ("--tensor-model-parallel-size" for --tp). Calling it twice changes nothing.
void read_numbers_strictly(CLI::App& app);

}  // namespace cc::interop
