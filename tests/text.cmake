# The CSV splitter and the JSON scan and writer that every folder shares (sim/csv.h, sim/json.h).
llmsim_test(test_sim_text SOURCES test_sim_text.c LIBS llmsim_core LABELS unit TIMEOUT 60)
