/*
 * test_main.h - the test programs are entries of one executable,
 * parsum_tests (test_main.c), not one executable each: every program links
 * the whole library, whose GPU code alone is tens of megabytes, and thirty
 * copies of it filled the disk of a build machine. A program's source
 * declares its entry with PARSUM_TEST_MAIN(test_name) where it would have
 * written main; the build links every entry into parsum_tests and makes a
 * symbolic link test_name -> parsum_tests beside it. Either way runs the
 * same program:
 *
 *   ./build/tests/test_scan
 *   ./build/tests/parsum_tests test_scan
 */
#ifndef PARSUM_TEST_MAIN_H
#define PARSUM_TEST_MAIN_H

/* argc/argv as main would see them: argv[0] is the program's name. */
#define PARSUM_TEST_MAIN(name)                                  \
    int parsum_test_main_##name(int argc __attribute__((unused)), \
                                char **argv __attribute__((unused)))

#endif
