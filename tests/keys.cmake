# The settings tables every scenario key is declared in: sound rows, the checks and stores the
# loader relies on, the defaults, whole pools, and docs/keys.md as `llmsim list keys --markdown`
# prints it; the metric vocabulary.
llmsim_test(test_keys SOURCES test_keys.c LIBS llmsim_study LABELS unit TIMEOUT 120)
add_dependencies(test_keys llmsim)
