RUN apt-get update && apt-get install -y --no-install-recommends default-jdk-headless junit5 libassertj-core-java \
    libandroid-json-org-java && rm -rf /var/lib/apt/lists/*
