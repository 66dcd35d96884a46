/*
 * tests/test_fuzz_regress: every input `make fuzz` ever crashed on
 * (tests/fixtures/fuzz/), run through the fuzz target itself under the
 * test build's ASan and UBSan.  A file here that crashes again fails the
 * test run.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/fixture.h"
#include "tests/fuzz/fuzz.h"

static void
test_fuzz_regress__every_saved_input(void **state)
{
	DIR *d = opendir("tests/fixtures/fuzz");
	struct dirent *de;
	size_t n = 0;

	(void)state;
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		char path[512];
		size_t len;
		char *buf;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "tests/fixtures/fuzz/%s",
		    de->d_name);
		buf = fixture_read(path, &len);
		assert_non_null(buf);
		assert_int_equal(LLVMFuzzerTestOneInput((const uint8_t *)buf,
		    len), 0);
		free(buf);
		n++;
	}
	closedir(d);
	assert_true(n >= 1);
}

int
main(void)
{
	static const struct CMUnitTest t[] = {
		cmocka_unit_test(test_fuzz_regress__every_saved_input),
	};

	return cmocka_run_group_tests_name("fuzz_regress", t, NULL, NULL);
}
