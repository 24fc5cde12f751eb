"""Python policies the CLI tests name as py:wstest_policies:CLASS."""
import time


class Boom:
    """b0 `after` times, then a KeyError."""

    def __init__(self, after=3):
        self.after, self.n = after, 0

    def register_job(self, job, batch_sizes):
        self.b = job.default_bs

    def predict(self, job):
        self.n += 1
        if self.n > self.after:
            return {}["missing"]
        print("hello from predict")
        return self.b

    def observe(self, job, batch_size, cost, converged):
        pass


class Hang(Boom):
    """Never returns from predict."""

    def predict(self, job):
        while True:
            time.sleep(0.05)


class WrongType(Boom):
    def predict(self, job):
        return 1.5
