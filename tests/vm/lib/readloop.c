// SPDX-License-Identifier: GPL-2.0
/*
 * readloop FILE MS: reads sysfs attribute FILE from offset 0 (pread) in a
 * tight loop on one open file, for up to MS milliseconds or until the file
 * is removed (the read fails with ENODEV). Prints "open" once the file is
 * open, so that a test removes it only then. Each pread runs the attribute's
 * show with an active reference held, back to back: a removal of the file
 * then finds a reader inside it, which `cat` in a loop (mostly exec and
 * open) almost never gives. Prints "reads N" and exits 0 at the removal, 3
 * if MS went by without one, or 2 on another error. Built statically into
 * the test guest
 * (scripts/mkinitramfs.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	long long end, reads = 0;
	char buf[4096];
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: readloop FILE MS\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "%s: open: %s\n", argv[1], strerror(errno));
		return 2;
	}
	printf("open\n");
	fflush(stdout);
	end = now_ms() + atoll(argv[2]);
	while (now_ms() < end) {
		if (pread(fd, buf, sizeof(buf), 0) < 0) {
			if (errno == ENODEV) {
				printf("reads %lld\n", reads);
				return 0;
			}
			fprintf(stderr, "%s: read: %s\n", argv[1], strerror(errno));
			return 2;
		}
		reads++;
	}
	fprintf(stderr, "%s: not removed in %s ms (reads %lld)\n", argv[1], argv[2], reads);
	return 3;
}
