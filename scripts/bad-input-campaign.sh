#!/usr/bin/env bash
# The whole generated bad-input campaign (tests/cli/test_bad_input_campaign.cpp): every number
# option of every command, read from its --help, and every key of shipped model and cluster
# files, each given values no reader accepts, through the real binary; every case must exit 2
# with one message naming the option or key and the value, and write nothing. The plain test
# suite runs a fixed sample of it (every 8th case); this runs all of it and prints the counts.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh default
CLUSTERCAST_CAMPAIGN=all build/tests/cli_tests --gtest_filter='BadInputCampaign.*'
