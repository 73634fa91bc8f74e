# jest's start-up made cheaper, its tests unchanged; built after every track's toolchain, so changing it rebuilds
# nothing else. lazy-babel.py: jest-snapshot loads Babel when it first writes an inline snapshot (a run with --ci
# never does) rather than at every start. code-cache.js, which check.sh and batch.sh preload (`node -r`) and name
# as jest's resolver: V8's code cache for jest's own modules and where each module they require was found, built
# here by one jest run over a sample exercise (build-code-cache.sh, which then checks the sample's verdicts with
# the caches read back) and read-only from then on, in the image.
COPY grader/javascript/code-cache.js grader/javascript/lazy-babel.py grader/javascript/build-code-cache.sh /opt/lab/js/
COPY grader/javascript/sample /opt/lab/js/sample
RUN python3 /opt/lab/js/lazy-babel.py /opt/lab/js/node_modules/jest-snapshot/build/InlineSnapshots.js \
    && sh /opt/lab/js/build-code-cache.sh
