// dsha: logical, order-independent digests of Spark tables.
// Sources shared by every Spark line live in jvm/src/main/scala; code that differs between Spark lines lives in
// jvm/src/main/spark-<line> behind io.dsha.shims.SparkShims, so a 3.5 (Scala 2.12) line can be added beside 4.x.

val sparkVersion = settingKey[String]("Spark version compiled against")
val sparkLine = settingKey[String]("Spark source line (directory suffix under jvm/src/main)")

ThisBuild / organization := "io.dsha"
ThisBuild / version := "0.1.0"

lazy val dsha = (project in file("jvm"))
  .settings(
    name := "dsha",
    sparkVersion := sys.props.getOrElse("spark.version", "4.0.1"),
    sparkLine := (if (sparkVersion.value.startsWith("3.")) "spark-3.5" else "spark-4"),
    scalaVersion := (if (sparkVersion.value.startsWith("3.")) "2.12.18" else "2.13.16"),
    javacOptions ++= Seq("--release", "17"),
    scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature", "-unchecked"),
    Compile / unmanagedSourceDirectories += baseDirectory.value / "src" / "main" / sparkLine.value,
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % sparkVersion.value % Provided,
      "org.scalatest" %% "scalatest" % "3.2.19" % Test,
      "commons-codec" % "commons-codec" % "1.17.1" % Test
    ),
    // The jar users pass to --jars: no Scala or Spark inside, a stable name.
    Compile / packageBin / artifactPath := target.value / s"dsha-${version.value}.jar",
    Test / fork := true,
    Test / javaOptions ++= Seq(
      "-Xmx3g",
      "-Xss8m",
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
      "--add-opens=java.base/java.io=ALL-UNNAMED",
      "--add-opens=java.base/java.net=ALL-UNNAMED",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
      "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
      "-Djdk.reflect.useDirectMethodHandle=false",
      "-Dio.netty.tryReflectionSetAccessible=true"
    ) ++ sys.props.get("dsha.codegen").map(m => s"-Ddsha.codegen=$m").toSeq,
    Test / parallelExecution := false,
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD")
  )

lazy val root = (project in file("."))
  .aggregate(dsha)
  .settings(publish / skip := true)
