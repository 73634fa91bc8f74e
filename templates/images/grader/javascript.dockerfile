# Node from Debian; jest and babel (the exercises' shared devDependencies, see grader/javascript/package.json)
# installed once into /opt/lab/js with npm, which is removed again: a test run needs only node.
COPY grader/javascript/package.json /opt/lab/js/package.json
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm \
    && cd /opt/lab/js && NODE_EXTRA_CA_CERTS=/etc/ssl/certs/lab-host-ca.crt \
       npm install --no-audit --no-fund --ignore-scripts --no-update-notifier \
    && node node_modules/jest/bin/jest.js --version \
    && apt-get purge -y npm && apt-get autoremove -y --purge && rm -rf /var/lib/apt/lists/* /root/.npm
