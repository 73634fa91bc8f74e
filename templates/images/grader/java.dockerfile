# Java: OpenJDK from Debian; the jars the exercises' build.gradle files name, at those exact versions (JUnit
# Platform console 1.10.0 with Jupiter, AssertJ 3.25.1, RxJava 2.2.12, org.json 20190722), fetched with Maven
# from its default repository at build time; Maven is removed again in the same layer. The host's CA bundle
# is split into single certificates so that Java's trust store (used by Maven) gets them.
# Layout: /opt/lab/java/console/ (the JUnit console launcher), lib/ (the libraries), classpath (both, in
# order, ':'-separated), and the class-data archives javac.jsa and junit.jsa (below).
COPY grader/java/pom.xml /opt/lab/java/pom.xml
RUN set -eu; apt-get update; apt-get install -y --no-install-recommends default-jdk-headless; \
    mkdir -p /usr/local/share/ca-certificates/lab-host; \
    awk '/-BEGIN CERTIFICATE-/{n++; f=1} f{print > ("/usr/local/share/ca-certificates/lab-host/" n ".crt")} /-END CERTIFICATE-/{f=0}' \
        /etc/ssl/certs/lab-host-ca.crt; \
    update-ca-certificates >/dev/null; \
    apt-get install -y --no-install-recommends maven; \
    mvn -B -q -f /opt/lab/java/pom.xml -Dmaven.repo.local=/tmp/m2 dependency:copy-dependencies -DoutputDirectory=/opt/lab/java/lib; \
    apt-get purge -y --auto-remove maven; rm -rf /tmp/m2 /root/.m2 /var/lib/apt/lists/*; \
    mkdir /opt/lab/java/console; mv /opt/lab/java/lib/junit-platform-console-standalone-*.jar /opt/lab/java/console/; \
    ls /opt/lab/java/console/*.jar /opt/lab/java/lib/*.jar | paste -sd: > /opt/lab/java/classpath; cat /opt/lab/java/classpath
# Class-data sharing: javac and the JUnit launcher start about a quarter faster from archives of the classes they
# load, recorded here by compiling and testing a stand-in exercise. check.sh must run with the same
# -XX:+UseSerialGC and the same class path prefix, or the JVM silently ignores the archive.
COPY grader/java/cds/ /opt/lab/java/cds/
RUN set -eu; cd /opt/lab/java/cds; cp=$(cat /opt/lab/java/classpath); find src -name '*.java' | sort > /tmp/sources; \
    javac -J-XX:+UseSerialGC -J-XX:TieredStopAtLevel=1 -J-XX:ArchiveClassesAtExit=/opt/lab/java/javac.jsa \
        -encoding UTF-8 -nowarn -proc:none -d /tmp/cds -cp "$cp" @/tmp/sources >/dev/null 2>&1; \
    java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:ArchiveClassesAtExit=/opt/lab/java/junit.jsa -cp "$cp" \
        org.junit.platform.console.ConsoleLauncher execute --disable-banner --details=tree --class-path /tmp/cds \
        --select-class=SampleTest --config=junit.jupiter.conditions.deactivate='org.junit.*DisabledCondition' \
        --reports-dir /tmp/cds-report >/dev/null 2>&1 || true; \
    test -s /opt/lab/java/javac.jsa; test -s /opt/lab/java/junit.jsa; rm -rf /tmp/cds /tmp/cds-report /tmp/sources
