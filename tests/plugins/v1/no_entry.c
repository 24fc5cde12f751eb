/*
 * Test plugin: a shared object that exports no ws_plugin_entry (only some
 * unrelated function). The host must say it is not a wattsim plugin.
 */
int wattsim_test_not_an_entry(void);

int wattsim_test_not_an_entry(void) { return 42; }
