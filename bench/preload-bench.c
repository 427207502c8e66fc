/* preload-bench open|connect N: the per-call cost of one wrapped libc
 * call, to compare natively, under the shim in ptrace mode (host names
 * only) and under --backend preload (decided in-process).
 *
 *   open:    open("/dev/null", O_RDONLY) + close, N times
 *   connect: socket + connect to 127.0.0.1:1 (refused) + close, N times
 *
 * Prints "OP N ns_per_call". */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 100000;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(1) };
	double t0, t1;

	if (argc < 2 || n <= 0) {
		fprintf(stderr, "usage: preload-bench open|connect N\n");
		return 2;
	}
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		if (strcmp(argv[1], "open") == 0) {
			int fd = open("/dev/null", O_RDONLY);

			if (fd < 0)
				return 1;
			close(fd);
		} else {
			int fd = socket(AF_INET, SOCK_STREAM, 0);

			if (fd < 0)
				return 1;
			connect(fd, (struct sockaddr *)&sa, sizeof(sa));
			close(fd);
		}
	}
	t1 = bench_now_ns();
	printf("%s %ld %.0f\n", argv[1], n, (t1 - t0) / (double)n);
	return 0;
}
