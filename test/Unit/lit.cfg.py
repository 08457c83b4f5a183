# -*- Python -*-
# The GoogleTest unit tests, run by lit so that one summary counts them all.

import os

import lit.formats

config.name = "FP8-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.fp8_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
