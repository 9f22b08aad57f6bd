// dsha: logical, order-independent digests of Spark tables.
// Sources shared by every Spark line live in jvm/src/main/scala (+java); code that differs between Spark lines lives in
// jvm/src/main/spark-<line> behind io.dsha.shims.SparkShims.
//
// One jar per Spark line and Scala version, listed in dev/spark-lines (the only place the versions are written):
//   dev/sbt dsha/package                                    Spark 4.x, Scala 2.13 -> jvm/target/dsha-spark4_2.13-V.jar
//   dev/sbt -Dspark.line=3.5 dsha/package                   Spark 3.5, Scala 2.12 -> jvm/target/dsha-spark3.5_2.12-V.jar
//   dev/sbt -Dspark.line=3.5 -Dscala.binary=2.13 dsha/package                       -> jvm/target/dsha-spark3.5_2.13-V.jar
// -Dspark.version=X.Y.Z compiles (and runs dsha/test) against another release of that line (the line follows from it).
// Each line and Scala version has its own target directory (jvm/target/spark<line>_<scala>/), so builds do not collide.

val sparkVersion = settingKey[String]("Spark version compiled against")
val sparkLine = settingKey[String]("Spark line: 3.5 or 4")
val scalaBinary = settingKey[String]("Scala binary version: 2.12 or 2.13")
val writeTestClasspath =
  taskKey[File]("Writes the external test classpath to target/test-classpath-<Spark version>.txt (dev/scala-suite-on)")

ThisBuild / organization := "io.dsha"
ThisBuild / version := "0.1.0"

lazy val selectedLine: SparkLine = SparkLines.selected(file("dev/spark-lines"))

lazy val dsha = (project in file("jvm"))
  .settings(
    name := "dsha",
    sparkLine := selectedLine.line,
    scalaBinary := selectedLine.scala,
    sparkVersion := sys.props.getOrElse("spark.version", selectedLine.build),
    scalaVersion := selectedLine.scalaFull,
    target := baseDirectory.value / "target" / s"spark${sparkLine.value}_${scalaBinary.value}",
    javacOptions ++= Seq("--release", selectedLine.java),
    // -release (not -target) also checks that only the JDK's API of that release is used, on Scala 2.12 and 2.13.
    scalacOptions ++= Seq("-release", selectedLine.java, "-deprecation", "-feature", "-unchecked"),
    Compile / unmanagedSourceDirectories += baseDirectory.value / "src" / "main" / s"spark-${selectedLine.srcdir}",
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % sparkVersion.value % Provided,
      "org.scalatest" %% "scalatest" % "3.2.19" % Test,
      "commons-codec" % "commons-codec" % "1.17.1" % Test
    ) ++ (
      // scala.jdk.CollectionConverters (Scala 2.13) for the tests on Scala 2.12; the version Spark 3.5 ships.
      if (scalaBinary.value == "2.12") Seq("org.scala-lang.modules" %% "scala-collection-compat" % "2.7.0" % Test)
      else Nil
    ),
    // The jar users pass to --jars: no Scala or Spark inside; its name says the Spark line and the Scala version.
    Compile / packageBin / artifactPath :=
      baseDirectory.value / "target" / s"dsha-spark${sparkLine.value}_${scalaBinary.value}-${version.value}.jar",
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
    // Written once at build time, so that running the compiled suite on another Spark release needs no sbt launch.
    writeTestClasspath := {
      val out = target.value / s"test-classpath-${sparkVersion.value}.txt"
      IO.write(out, (Test / externalDependencyClasspath).value.map(_.data.getAbsolutePath).mkString(java.io.File.pathSeparator))
      out
    },
    Test / parallelExecution := false,
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD")
  )

lazy val root = (project in file("."))
  .aggregate(dsha)
  .settings(publish / skip := true)
